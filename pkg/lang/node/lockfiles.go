package node

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// checkSources refuses, before any install, a checkout whose package.json
// or lockfile takes a package from elsewhere than reg (see sourceCheck).
// Keys are read as written, never matched case-insensitively.
func checkSources(reg registry, lockfile string, manifest, lock []byte) error {
	c := &sourceCheck{reg: reg}
	var top map[string]json.RawMessage
	if json.Unmarshal(manifest, &top) == nil {
		c.workspaces = workspacePatterns(top["workspaces"])
	}
	if err := c.manifest(manifest); err != nil {
		return fmt.Errorf("node setup: read %w", err)
	}
	var err error
	switch lockfile {
	case "package-lock.json", "npm-shrinkwrap.json":
		err = c.npmLockfile(lock)
	case "pnpm-lock.yaml":
		err = c.pnpmLockfile(lock)
	case "yarn.lock":
		err = c.yarnLockfile(lock)
	default:
		err = fmt.Errorf("no reader for this lockfile")
	}
	if err != nil {
		return fmt.Errorf("node setup: read %s: %w", lockfile, err)
	}
	return c.err(lockfile)
}

// unreadable is why an entry whose fields are not what the format says
// is refused.
const unreadable = "an entry whose fields are not strings and booleans where the format has them"

// str is a JSON string field ("" when absent); ok is false for any other
// JSON value.
func str(raw json.RawMessage) (s string, ok bool) {
	if raw == nil {
		return "", true
	}
	return s, json.Unmarshal(raw, &s) == nil
}

// npmLockfile checks package-lock.json or npm-shrinkwrap.json: the
// "packages" of lockfile versions 2 and 3, and the "dependencies" tree of
// versions 1 and 2.
func (c *sourceCheck) npmLockfile(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return err
	}
	if raw, ok := top["packages"]; ok {
		var pkgs map[string]map[string]json.RawMessage
		if err := json.Unmarshal(raw, &pkgs); err != nil {
			return fmt.Errorf("packages: %w", err)
		}
		if root, ok := pkgs[""]; ok {
			c.workspaces = append(c.workspaces, workspacePatterns(root["workspaces"])...)
		}
		for key, e := range pkgs {
			if key != "" {
				c.npmPackage(key, e)
			}
		}
	}
	if raw, ok := top["dependencies"]; ok {
		return c.npmDependencies(raw)
	}
	return nil
}

// npmPackage checks an entry of "packages": a path under node_modules
// (where the package is installed), or the folder of a local package
// (a workspace's, or a file: dependency's), which must be a workspace.
func (c *sourceCheck) npmPackage(key string, e map[string]json.RawMessage) {
	clean := path.Clean(key)
	inNodeModules := strings.HasPrefix(clean, "node_modules/") || strings.Contains(clean, "/node_modules/")
	if !inNodeModules || clean == ".." || strings.HasPrefix(clean, "../") || path.IsAbs(clean) {
		c.local(key, key, ".", key)
	}
	resolved, ok1 := str(e["resolved"])
	version, ok2 := str(e["version"])
	var link bool
	ok3 := e["link"] == nil || json.Unmarshal(e["link"], &link) == nil
	if !ok1 || !ok2 || !ok3 {
		c.refuse(key, "", unreadable)
		return
	}
	c.resolved(key, resolved, link)
	if strings.ContainsAny(version, ":/") {
		c.spec(key, version, ".")
	}
}

// npmDependencies checks lockfile version 1's tree of dependencies: each
// one's version (a version, or a spec: file:, git, a URL), where it was
// resolved, and what it was asked as.
func (c *sourceCheck) npmDependencies(raw json.RawMessage) error {
	var deps map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &deps); err != nil {
		return fmt.Errorf("dependencies: %w", err)
	}
	for name, e := range deps {
		version, ok1 := str(e["version"])
		resolved, ok2 := str(e["resolved"])
		from, ok3 := str(e["from"])
		if !ok1 || !ok2 || !ok3 {
			c.refuse(name, "", unreadable)
			continue
		}
		c.spec(name, version, ".")
		c.resolved(name, resolved, false)
		if from != "" {
			c.spec(name, strings.TrimPrefix(from, name+"@"), ".")
		}
		if sub, ok := e["dependencies"]; ok {
			if err := c.npmDependencies(sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// pnpmLockfile checks pnpm-lock.yaml (lockfile versions 5 to 9): the
// importers (the workspace's projects, or the one project at the top of
// version 5) and where each package is resolved from.
func (c *sourceCheck) pnpmLockfile(data []byte) error {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	importers := map[string]any{".": doc}
	if im, ok := doc["importers"].(map[string]any); ok {
		importers = im
	}
	for dir := range importers {
		clean := path.Clean(dir)
		if clean == ".." || strings.HasPrefix(clean, "../") || path.IsAbs(clean) {
			c.refuse(dir, dir, "a project outside the checkout")
			continue
		}
		if clean != "." {
			c.workspaces = append(c.workspaces, clean)
		}
	}
	for dir, im := range importers {
		project, _ := im.(map[string]any)
		for _, field := range []string{"dependencies", "devDependencies", "optionalDependencies"} {
			deps, _ := project[field].(map[string]any)
			for name, d := range deps {
				c.pnpmDependency(dir, name, d)
			}
		}
	}
	pkgs, _ := doc["packages"].(map[string]any)
	for key, p := range pkgs {
		entry, _ := p.(map[string]any)
		c.pnpmResolution(key, entry["resolution"])
	}
	return nil
}

// pnpmDependency checks an importer's dependency: its specifier, and a
// version that links to (or copies) a directory, which must be a
// workspace project.
func (c *sourceCheck) pnpmDependency(dir, name string, d any) {
	version, spec := "", ""
	switch v := d.(type) {
	case string:
		version = v
	case map[string]any:
		version, _ = v["version"].(string)
		spec, _ = v["specifier"].(string)
	default:
		c.refuse(name, fmt.Sprint(d), unreadable)
		return
	}
	if spec != "" {
		c.spec(name, spec, dir)
	}
	lower := strings.ToLower(version)
	if strings.HasPrefix(lower, "link:") || strings.HasPrefix(lower, "file:") {
		c.local(name, version, dir, version[len("link:"):])
	}
}

// pnpmResolution checks where pnpm fetches a package from: the registry
// (an integrity alone, or a tarball of the registry), or a workspace
// directory; never a git repository, another tarball or another type.
func (c *sourceCheck) pnpmResolution(key string, r any) {
	res, ok := r.(map[string]any)
	if !ok {
		c.refuse(key, fmt.Sprint(r), unreadable)
		return
	}
	for k, v := range res {
		if _, ok := v.(string); !ok && k != "variants" {
			c.refuse(key, fmt.Sprint(res), unreadable)
			return
		}
	}
	typ, _ := res["type"].(string)
	tarball, _ := res["tarball"].(string)
	if r, ok := res["registry"].(string); ok && !c.reg.holds(r) {
		c.refuse(key, r, whyOutside)
	}
	switch {
	case typ == "git" || res["repo"] != nil || res["commit"] != nil:
		repo, _ := res["repo"].(string)
		c.refuse(key, repo, whyGit)
	case typ == "directory" || typ == "" && res["directory"] != nil:
		dir, _ := res["directory"].(string)
		c.local(key, dir, ".", dir)
	case typ != "":
		c.refuse(key, typ, whyProtocol)
	case tarball != "":
		c.resolved(key, tarball, false)
	}
}

// yarnLockfile checks yarn.lock: yarn 1's own format, or the YAML of
// later yarns (a __metadata entry first).
func (c *sourceCheck) yarnLockfile(data []byte) error {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "__metadata:") || strings.HasPrefix(line, `"__metadata":`) {
			return c.berryLockfile(data)
		}
	}
	return c.yarnV1(text)
}

// yarnV1 checks yarn 1's lockfile line by line: every URL anywhere on a
// line (whatever field holds it) must be the registry's, each entry's
// specs (its key: "name@range, name@other") and each dependency's spec
// must install from the registry, and "resolved" is where it is fetched.
func (c *sourceCheck) yarnV1(text string) error {
	current := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		if len(trimmed) == len(line) {
			// An entry: its specs, comma-separated, each perhaps quoted.
			for j, s := range strings.Split(strings.TrimSuffix(trimmed, ":"), ",") {
				name, spec := splitSpec(unquote(strings.TrimSpace(s)))
				if j == 0 {
					current = name
				}
				c.spec(name, spec, ".")
			}
		} else {
			key, value, _ := strings.Cut(trimmed, " ")
			key = strings.TrimSuffix(unquote(key), ":")
			value = unquote(strings.TrimSpace(value))
			switch {
			case key == "resolved":
				c.resolved(current, value, false)
			case value != "" && len(line)-len(trimmed) >= 4:
				c.spec(key, value, ".")
			}
		}
		// Whatever the line is, a URL on it that was not refused above.
		c.urlsOn(fmt.Sprintf("yarn.lock:%d", i+1), trimmed)
	}
	return nil
}

// urlsOn refuses each URL on a line of yarn.lock that is not the
// registry's.
func (c *sourceCheck) urlsOn(where, line string) {
	for rest := line; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return
		}
		start := i
		for start > 0 && (isSchemeChar(rest[start-1])) {
			start--
		}
		end := i + 3
		for end < len(rest) && !strings.ContainsRune(" \t\",", rune(rest[end])) {
			end++
		}
		// An entry's key ends with a colon.
		u := strings.TrimRight(rest[start:end], ":")
		lower := strings.ToLower(u)
		switch {
		case c.refusedSource(u):
		case isGit(lower):
			c.refuse(where, u, whyGit)
		case strings.HasPrefix(lower, "http:") || strings.HasPrefix(lower, "https:"):
			c.url(where, u)
		default:
			c.refuse(where, u, whyProtocol)
		}
		rest = rest[end:]
	}
}

func isSchemeChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '+' || b == '.' || b == '-'
}

// unquote reads a yarn.lock string: JSON-quoted, or bare.
func unquote(s string) string {
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

// splitSpec splits "name@spec" (the name perhaps scoped: "@s/n@spec").
func splitSpec(s string) (name, spec string) {
	if len(s) < 2 {
		return s, ""
	}
	i := strings.Index(s[1:], "@")
	if i < 0 {
		return s, ""
	}
	return s[:i+1], s[i+2:]
}

// berryLockfile checks the lockfile of yarn 2 and later: each entry's
// resolution ("name@npm:1.0.0", "name@workspace:packages/a") must be the
// registry's or a workspace's. A patch: resolution is checked for what it
// patches; an npm: one naming its own archive URL for that URL.
func (c *sourceCheck) berryLockfile(data []byte) error {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	for key, e := range doc {
		if key == "__metadata" {
			continue
		}
		entry, ok := e.(map[string]any)
		res, ok2 := entry["resolution"].(string)
		if !ok || !ok2 {
			c.refuse(key, fmt.Sprint(e), unreadable)
			continue
		}
		c.berryResolution(key, res)
	}
	return nil
}

func (c *sourceCheck) berryResolution(key, res string) {
	name, ref := splitSpec(res)
	lower := strings.ToLower(ref)
	switch {
	case strings.HasPrefix(lower, "npm:"):
		if _, params, ok := strings.Cut(ref, "::"); ok {
			q, err := url.ParseQuery(params)
			if err != nil {
				c.refuse(name, ref, unreadable)
				return
			}
			if a := q.Get("__archiveUrl"); a != "" && !c.reg.holds(a) {
				c.refuse(name, a, whyOutside)
			}
		}
	case strings.HasPrefix(lower, "patch:"):
		inner, _, _ := strings.Cut(ref[len("patch:"):], "#")
		dec, err := url.PathUnescape(inner)
		if err != nil {
			c.refuse(name, ref, unreadable)
			return
		}
		c.berryResolution(key, dec)
	case strings.HasPrefix(lower, "workspace:"):
		if p := ref[len("workspace:"):]; path.Clean(p) != "." {
			c.local(name, ref, ".", p)
		}
	default:
		c.spec(name, ref, ".")
	}
}
