"""Reads the dependencies a Python project declares, for redfix's driver.

Arguments: a copy of the project's pyproject.toml and one of its setup.cfg
("" for a file the project does not have), the dependency groups asked for
(comma-separated, "" for the default) and the groups the project's
requirement files are named for (comma-separated). Prints one JSON object:
the requirement strings, each with the file and table or key it is from and
whether its install may fail without failing the setup ("requires":
[{"requirement": ..., "from": ..., "optional": ...}]), the tools the tests
need that this interpreter lacks ("missing"), its version, what could not
be read ("notes"), and whether these files declare a tests' group
("tests_declared"). It reads only the files it is given and imports
nothing of the project.

Which groups: those asked for; else the tests' (test, tests, testing)
where the project declares any, in these files or as requirement files;
else dev, optional: a tool the tests may not import (a linter, Sphinx)
that fails to install is a warning, not a failed setup.
"""
import configparser
import importlib.util
import json
import re
import sys

# The groups a test run installs by default: the tests' own.
TEST_GROUPS = ("test", "tests", "testing")
# The group installed, optionally, where the project declares no tests'.
FALLBACK = "dev"


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


def expand(name, base, groups, wanted, optional):
    """The base requirements and the wanted groups' (optional ones marked),
    with the project's own extras (dev = ["proj[test]"]) replaced by their
    groups."""
    out, seen = [], set()
    todo = [(r, s, False) for r, s in base]
    for g in wanted:
        todo += [(r, s, optional) for r, s in groups.get(g, [])]
    seen_groups = set(wanted)
    while todo:
        req, source, opt = todo.pop(0)
        n, extras = req_name(req)
        if name is not None and n == name:
            for e in extras:
                if e not in seen_groups:
                    seen_groups.add(e)
                    todo += [(r, s, opt) for r, s in groups.get(e, [])]
            continue
        if req not in seen:
            seen.add(req)
            out.append({"requirement": req, "from": source, "optional": opt})
    return out


def choose(declared, asked, file_groups, notes):
    """The groups to install, and whether their installs are optional."""
    if asked:
        for g in asked:
            if g not in declared and g not in file_groups:
                notes.append("dependency group %s is not declared (pyproject.toml, setup.cfg or a requirements file named for it)" % label(g))
        return asked, False
    if any(g in declared or g in file_groups for g in TEST_GROUPS):
        return list(TEST_GROUPS), False
    return [FALLBACK], True


def from_pyproject(p, notes):
    try:
        import tomllib
    except ImportError:
        try:
            import tomli as tomllib
        except ImportError:
            notes.append("pyproject.toml: this Python has no TOML parser (3.11 and later do): its dependencies are not read")
            return None, [], {}
    try:
        with open(p, "rb") as f:
            data = tomllib.load(f)
    except Exception as e:
        notes.append("pyproject.toml: %s" % e)
        return None, [], {}
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
    return name, strings(project.get("dependencies"), "pyproject.toml [project] dependencies"), groups


def from_setup_cfg(p, notes):
    cp = configparser.ConfigParser(interpolation=None)
    try:
        with open(p, encoding="utf-8") as f:
            cp.read_file(f)
    except Exception as e:
        notes.append("setup.cfg: %s" % e)
        return None, [], {}
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
    return name, base, groups


def main():
    pyproject, setup_cfg = sys.argv[1], sys.argv[2]
    asked = [norm(g) for g in sys.argv[3].split(",") if g]
    file_groups = set(norm(g) for g in sys.argv[4].split(",") if g)
    notes, requires = [], []
    parsed = []
    if pyproject:
        parsed.append(from_pyproject(pyproject, notes))
    if setup_cfg:
        parsed.append(from_setup_cfg(setup_cfg, notes))
    declared = set()
    for _, _, groups in parsed:
        declared |= set(groups)
    wanted, optional = choose(declared, asked, file_groups, notes)
    for name, base, groups in parsed:
        have = set(r["requirement"] for r in requires)
        requires += [r for r in expand(name, base, groups, wanted, optional) if r["requirement"] not in have]
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
    tests_declared = any(g in declared for g in TEST_GROUPS)
    json.dump({"requires": requires, "missing": missing, "version": version, "notes": notes, "tests_declared": tests_declared}, sys.stdout)


main()
