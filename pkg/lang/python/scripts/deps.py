"""Reads the dependencies a Python project declares, for redfix's driver.

Arguments: a copy of the project's pyproject.toml and one of its setup.cfg
("" for a file the project does not have). Prints one JSON object: the
requirement strings, each with the file and table or key it is from
("requires": [{"requirement": ..., "from": ...}]), the tools the tests need that this
interpreter lacks ("missing"), its version, and what could not be read
("notes"). It reads only the files it is given and imports nothing of the
project.
"""
import configparser
import importlib.util
import json
import re
import sys

# The optional groups a test run installs: the ones CI installs for tests.
GROUPS = ("test", "tests", "testing", "dev")


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def req_name(req):
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[([^\]]*)\])?", req)
    if not m:
        return None, []
    extras = [e.strip() for e in (m.group(3) or "").split(",") if e.strip()]
    return norm(m.group(1)), extras


def label(group):
    """A group's name as a note shows it: quoted unless a plain word."""
    return group if re.fullmatch(r"[A-Za-z0-9._-]+", group) else json.dumps(group)


def strings(value, source):
    """The requirement strings of a value, each paired with source."""
    if isinstance(value, str):
        value = value.splitlines()
    if not isinstance(value, list):
        return []
    return [(v.strip(), source) for v in value if isinstance(v, str) and v.strip() and not v.strip().startswith("#")]


def expand(name, base, groups, notes):
    """The base requirements and the groups', with the project's own
    extras (dev = ["proj[test]"]) replaced by their groups."""
    out, seen, todo = [], set(), list(base)
    for g in GROUPS:
        todo += groups.get(g, [])
    seen_groups = set(GROUPS)
    while todo:
        req, source = todo.pop(0)
        n, extras = req_name(req)
        if name is not None and n == name:
            for e in extras:
                if e not in seen_groups:
                    seen_groups.add(e)
                    todo += groups.get(e, [])
            continue
        if req not in seen:
            seen.add(req)
            out.append({"requirement": req, "from": source})
    return out


def from_pyproject(p, notes):
    try:
        import tomllib
    except ImportError:
        try:
            import tomli as tomllib
        except ImportError:
            notes.append("pyproject.toml: this Python has no TOML parser (3.11 and later do): its dependencies are not read")
            return []
    try:
        with open(p, "rb") as f:
            data = tomllib.load(f)
    except Exception as e:
        notes.append("pyproject.toml: %s" % e)
        return []
    project = data.get("project")
    if not isinstance(project, dict):
        project = {}
    name = project.get("name")
    name = norm(name) if isinstance(name, str) else None
    groups = {}
    opt = project.get("optional-dependencies")
    if isinstance(opt, dict):
        for g, reqs in opt.items():
            groups[norm(g)] = strings(reqs, "pyproject.toml [project.optional-dependencies] %s" % label(g))
    dg = data.get("dependency-groups")
    if isinstance(dg, dict):
        for g, reqs in dg.items():
            groups.setdefault(norm(g), [])
            groups[norm(g)] += strings(reqs, "pyproject.toml [dependency-groups] %s" % label(g))
    if isinstance(data.get("tool"), dict) and "poetry" in data["tool"]:
        notes.append("pyproject.toml: Poetry's dependency tables are not read")
    return expand(name, strings(project.get("dependencies"), "pyproject.toml [project] dependencies"), groups, notes)


def from_setup_cfg(p, notes):
    cp = configparser.ConfigParser(interpolation=None)
    try:
        with open(p, encoding="utf-8") as f:
            cp.read_file(f)
    except Exception as e:
        notes.append("setup.cfg: %s" % e)
        return []
    name = cp.get("metadata", "name", fallback=None)
    name = norm(name) if name else None
    base = strings(cp.get("options", "install_requires", fallback=""), "setup.cfg [options] install_requires")
    if any(r.startswith("file:") for r, _ in base):
        notes.append("setup.cfg: install_requires from a file is not read")
        base = [(r, s) for r, s in base if not r.startswith("file:")]
    groups = {}
    if cp.has_section("options.extras_require"):
        for g, reqs in cp.items("options.extras_require"):
            groups[norm(g)] = [(r, s) for r, s in strings(reqs, "setup.cfg [options.extras_require] %s" % label(g)) if not r.startswith("file:")]
    return expand(name, base, groups, notes)


def main():
    pyproject, setup_cfg = sys.argv[1], sys.argv[2]
    notes, requires = [], []
    if pyproject:
        requires += from_pyproject(pyproject, notes)
    if setup_cfg:
        have = set(r["requirement"] for r in requires)
        requires += [r for r in from_setup_cfg(setup_cfg, notes) if r["requirement"] not in have]
    missing = []
    for tool in ("pytest", "coverage"):
        # Found, not imported: importing pytest costs half a second.
        try:
            found = importlib.util.find_spec(tool) is not None
        except Exception:
            found = False
        if not found:
            missing.append(tool)
    version = "%d.%d.%d" % sys.version_info[:3]
    json.dump({"requires": requires, "missing": missing, "version": version, "notes": notes}, sys.stdout)


main()
