package validators

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/unidiff"
)

// What decides which JavaScript tests run and how they count is not the
// code's to change: the runners' configuration files, their setup files,
// vite's test section, package.json's jest and mocha keys and its test
// scripts. And code may not ask whether a runner runs it.

// jsRunnerFileRE matches the base names of the runners' configuration and
// setup files: jest.config.*, vitest.config.*, vitest.workspace.*,
// .mocharc.*, jest.setup.*, vitest.setup.*, setupTests.*.
var jsRunnerFileRE = regexp.MustCompile(`^(jest|vitest|ava|jasmine|karma|mocha)\.(config|workspace|projects)(\.[\w-]+)*\.([cm]?[jt]s|json[c5]?)$|^\.mocharc(\.(js|cjs|mjs|json|jsonc|yaml|yml))?$|^(jest|vitest|test|tests|mocha)[.-]setup([.-][\w-]+)*\.[cm]?[jt]sx?$|^setup-?tests(\.[\w-]+)*\.[cm]?[jt]sx?$|^jasmine\.json$`)

// jsRunnerFile reports a test runner's configuration or setup file.
func jsRunnerFile(p string) bool {
	return jsRunnerFileRE.MatchString(strings.ToLower(path.Base(p)))
}

// jsViteConfigRE matches vite's configuration, whose test section is
// vitest's.
var jsViteConfigRE = regexp.MustCompile(`^vite\.config(\.[\w-]+)*\.[cm]?[jt]s$`)

// jsConfigViolations are the changes of a patch to the test runners'
// configuration, whatever the policy on test edits.
func jsConfigViolations(dir string, f unidiff.File) []string {
	p := f.Path()
	base := path.Base(p)
	switch {
	case jsRunnerFile(p):
		return []string{fmt.Sprintf("%s: %s the test runner's configuration or setup (it decides which tests run and how they count)", p, editVerb(f))}
	case jsViteConfigRE.MatchString(base):
		return jsViteTestSection(dir, f)
	case base == "package.json":
		return jsPackageTestChanges(dir, f)
	}
	return nil
}

// jsViteTestSection reports a change to the test property of vite's
// configuration (vitest's settings), read with tree-sitter before and
// after the patch.
func jsViteTestSection(dir string, f unidiff.File) []string {
	before, after, ok := jsSides(dir, f)
	if !ok {
		return []string{fmt.Sprintf("%s: %s vite's configuration, whose test section cannot be compared", f.Path(), editVerb(f))}
	}
	section := func(rel string, src []byte) string {
		if rel == "" {
			return ""
		}
		tree, ok := parseJS(rel, src)
		if !ok {
			return ""
		}
		defer tree.close()
		out := ""
		walkJS(tree.root(), func(n *sitter.Node) bool {
			if out != "" {
				return false
			}
			if n.Kind() == "pair" {
				if k := n.ChildByFieldName("key"); k != nil && strings.Trim(tree.text(k), `'"`) == "test" {
					out = strings.Join(strings.Fields(tree.text(n)), " ")
					return false
				}
			}
			return true
		})
		return out
	}
	if section(f.OldPath, before) == section(f.NewPath, after) {
		return nil
	}
	return []string{fmt.Sprintf("%s: changes the test section of vite's configuration (vitest's settings decide which tests run and how they count)", f.Path())}
}

// jsPackageTestKeys are package.json's keys that configure a runner.
var jsPackageTestKeys = []string{"jest", "mocha", "ava", "vitest", "c8", "nyc"}

// jsPackageScriptRE matches the scripts that run the tests.
var jsPackageScriptRE = regexp.MustCompile(`^(pre|post)?test([:._-].*)?$`)

// jsPackageTestChanges reports the changes of package.json's runner keys
// and test scripts: both sides are read as JSON; a side that is not JSON
// is read by its changed lines.
func jsPackageTestChanges(dir string, f unidiff.File) []string {
	p := f.Path()
	before, after, ok := jsSides(dir, f)
	var b, a map[string]json.RawMessage
	if ok && (f.OldPath == "" || json.Unmarshal(before, &b) == nil) && (f.NewPath == "" || json.Unmarshal(after, &a) == nil) {
		var bad []string
		for _, k := range jsPackageTestKeys {
			if !jsonEqual(b[k], a[k]) {
				bad = append(bad, fmt.Sprintf("%s: changes the %q key (the test runner's configuration)", p, k))
			}
		}
		var bs, as map[string]json.RawMessage
		_ = json.Unmarshal(b["scripts"], &bs)
		_ = json.Unmarshal(a["scripts"], &as)
		names := map[string]bool{}
		for k := range bs {
			names[k] = true
		}
		for k := range as {
			names[k] = true
		}
		for _, k := range sortedKeys(names) {
			if jsPackageScriptRE.MatchString(k) && !jsonEqual(bs[k], as[k]) {
				bad = append(bad, fmt.Sprintf("%s: changes the %q script (it decides how the tests run)", p, k))
			}
		}
		return bad
	}
	lineRE := regexp.MustCompile(`^"(` + strings.Join(jsPackageTestKeys, "|") + `|(pre|post)?test([:._-][^"]*)?)"\s*:`)
	var bad []string
	for _, l := range f.Changes() {
		if t := norm(l.Text); lineRE.MatchString(t) {
			bad = append(bad, fmt.Sprintf("%s:%d: changes the tests' configuration or script: %s", p, l.Number(), t))
		}
	}
	return bad
}

// jsonEqual compares two JSON values by meaning (spacing and key order
// aside); an absent value equals only another.
func jsonEqual(x, y json.RawMessage) bool {
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	var a, b any
	if json.Unmarshal(x, &a) != nil || json.Unmarshal(y, &b) != nil {
		return bytes.Equal(x, y)
	}
	ma, _ := json.Marshal(a)
	mb, _ := json.Marshal(b)
	return bytes.Equal(ma, mb)
}

// jsSetupKeys are the configuration keys (jest's, vitest's, mocha's) whose
// values are files the runner loads before or around the tests.
var jsSetupKeys = map[string]bool{
	"setupFiles": true, "setupFilesAfterEnv": true, "globalSetup": true, "globalTeardown": true,
	"testEnvironment": true, "snapshotResolver": true, "testSequencer": true, "reporters": true,
	"require": true, "file": true,
}

// jsSetupFiles are the files of the checkout at dir that the runners'
// configuration names as setup (jest's setupFiles, setupFilesAfterEnv,
// globalSetup and testEnvironment, vitest's setupFiles and globalSetup,
// mocha's require and file), read from package.json, the runners' and
// vite's configuration files and .mocharc.* at the root. A setup file runs
// before every test: changing it changes what every test sees, whatever
// its name.
func jsSetupFiles(dir string) map[string]bool {
	out := map[string]bool{}
	add := func(spec string) {
		spec = strings.TrimPrefix(spec, "<rootDir>/")
		if spec == "" || strings.HasPrefix(spec, "/") || !(strings.HasPrefix(spec, ".") || strings.Contains(spec, "/")) {
			return // a package's name
		}
		p := path.Clean(spec)
		if strings.HasPrefix(p, "../") || p == ".." || p == "." {
			return
		}
		if isJSSource(p) {
			out[p] = true
			return
		}
		for _, ext := range jsExts {
			if _, err := readBeneath(dir, p+ext, maxSourceBytes); err == nil {
				out[p+ext] = true
				return
			}
		}
	}
	var fromJSON func(v any, key string)
	fromJSON = func(v any, key string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				fromJSON(x, k)
			}
		case []any:
			for _, x := range v {
				fromJSON(x, key)
			}
		case string:
			if jsSetupKeys[key] {
				add(v)
			}
		}
	}
	names, _ := listFiles(dir, ".")
	for _, name := range names {
		lower := strings.ToLower(name)
		switch {
		case lower == "package.json":
			var pkg map[string]json.RawMessage
			if data, err := readBeneath(dir, name, maxSourceBytes); err == nil && json.Unmarshal(data, &pkg) == nil {
				for _, k := range []string{"jest", "mocha", "vitest"} {
					var v any
					if json.Unmarshal(pkg[k], &v) == nil {
						fromJSON(v, "")
					}
				}
			}
		case strings.HasPrefix(lower, ".mocharc") && (strings.HasSuffix(lower, ".yml") || strings.HasSuffix(lower, ".yaml")):
			data, err := readBeneath(dir, name, maxSourceBytes)
			if err != nil {
				continue
			}
			key := ""
			for _, l := range strings.Split(string(data), "\n") {
				t := strings.TrimSpace(l)
				if item, ok := strings.CutPrefix(t, "- "); ok {
					if key == "require" || key == "file" {
						add(strings.Trim(strings.TrimSpace(item), `'"`))
					}
					continue
				}
				k, v, ok := strings.Cut(t, ":")
				if !ok {
					continue
				}
				key = strings.TrimSpace(k)
				if v = strings.TrimSpace(v); v != "" && (key == "require" || key == "file") {
					add(strings.Trim(v, `'"`))
				}
			}
		case strings.HasPrefix(lower, ".mocharc") && strings.HasSuffix(lower, "json") || (jsRunnerFile(name) || jsViteConfigRE.MatchString(lower)) && strings.HasSuffix(lower, ".json"):
			var v any
			if data, err := readBeneath(dir, name, maxSourceBytes); err == nil && json.Unmarshal(data, &v) == nil {
				fromJSON(v, "")
			}
		case (jsRunnerFile(name) || jsViteConfigRE.MatchString(lower)) && isJSSource(name):
			src, err := readBeneath(dir, name, maxSourceBytes)
			if err != nil {
				continue
			}
			tree, ok := parseJS(name, src)
			if !ok {
				continue
			}
			walkJS(tree.root(), func(n *sitter.Node) bool {
				if n.Kind() != "pair" {
					return true
				}
				k, v := n.ChildByFieldName("key"), n.ChildByFieldName("value")
				if k == nil || v == nil || !jsSetupKeys[strings.Trim(tree.text(k), `'"`)] {
					return true
				}
				walkJS(v, func(x *sitter.Node) bool {
					if s, ok := jsStringText(x, src); ok {
						add(s)
						return false
					}
					return true
				})
				return false
			})
			tree.close()
		}
	}
	return out
}
