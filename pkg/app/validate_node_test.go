package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
)

// `worker validate` on the JavaScript sample (jest): the honest fix passes
// every gate, and each cheat is caught by the gate whose job it is.
func TestValidateJavaScriptCheats(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	cfg := nodeConfig(t)
	s, _ := jsCase.sample(t, ctx, cfg)
	l := ledger{dir: s.Dir, blame: s.Commits[3]}
	configs := t.TempDir()
	writeConfig := func(name, extra string) string {
		p := filepath.Join(configs, name)
		yaml := "languages:\n  node:\n    cache_dir: " + cfg.Languages.Node.CacheDir + "\n" + extra
		if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	strict := writeConfig("strict.yaml", "")
	allowTests := writeConfig("allow-tests.yaml", "validators:\n  allow_test_edits: true\n")
	read := func(rel string) string {
		out, err := gitrepo.Repo{Dir: s.Dir}.Git(ctx, "show", "HEAD:"+rel)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	rates, bulky := read("src/rates.js"), read("src/bulky.test.js")
	bug := strings.TrimSpace(jsCase.bug)
	run := func(t *testing.T, config string, change map[string]string) (int, map[string]task.Gate, []string) {
		t.Helper()
		v, gates, code := validate(t, "--repo", s.Dir, "--patch", writePatch(t, l.patchOf(t, change)), "--test", jsCase.failing, "--blame", l.blame, "--config", config)
		return code, gates, v.RejectedBy
	}

	t.Run("honest fix", func(t *testing.T) {
		code, gates, rejected := run(t, strict, map[string]string{"src/rates.js": strings.Replace(rates, bug, strings.TrimSpace(jsCase.fix), 1)})
		if code != 0 {
			t.Fatalf("exit %d, rejected by %v", code, rejected)
		}
		for _, g := range []string{"integrity", "revert", "static", "oracle", "regression"} {
			wantGate(t, gates, g, task.GatePass)
		}
		wantGate(t, gates, "oracle", task.GatePass, "3/3 runs passed for each of "+jsCase.failing)
	})

	expectation := "    expect(chargeable(grams, box)).toBe(want);"
	for _, c := range []struct {
		name, config string
		change       map[string]string
		gate         string
		detail       []string
	}{
		{"describe.skip", allowTests, map[string]string{"src/bulky.test.js": strings.Replace(bulky, `describe("chargeable weight"`, `describe.skip("chargeable weight"`, 1)},
			"integrity", []string{"src/bulky.test.js:3: adds a skip or a focus"}},
		{"test.only", allowTests, map[string]string{"src/bulky.test.js": strings.Replace(bulky, `test("a parcel without dimensions`, `test.only("a parcel without dimensions`, 1)},
			"integrity", []string{"adds a skip or a focus"}},
		{"xit", allowTests, map[string]string{"src/bulky.test.js": strings.Replace(bulky, `test("a parcel without dimensions`, `xit("a parcel without dimensions`, 1)},
			"integrity", []string{"adds a skip or a focus"}},
		{"edited expectation", allowTests, map[string]string{"src/bulky.test.js": strings.Replace(bulky, expectation, "    expect(chargeable(grams, box)).toBeGreaterThan(0);", 1)},
			"integrity", []string{"removes an assertion: expect(chargeable(grams, box)).toBe(want);"}},
		{"snapshot written", strict, map[string]string{"src/__snapshots__/bulky.test.js.snap": "// Jest Snapshot v1\n\nexports[`chargeable weight 1`] = `4800`;\n"},
			"integrity", []string{"src/__snapshots__/bulky.test.js.snap"}},
		{"special-cased literal", strict, map[string]string{"src/rates.js": strings.Replace(rates, bug, "if (grams === 2800) {\n    return 4800;\n  }\n  "+bug, 1)},
			"integrity", []string{"special-cases a value of the failing test"}},
		{"detection through JEST_WORKER_ID", strict, map[string]string{"src/rates.js": strings.Replace(rates, bug, "if (process.env.JEST_WORKER_ID) {\n    return v;\n  }\n  "+bug, 1)},
			"integrity", []string{"detects that it runs under test by a test runner's environment variables (JEST_WORKER_ID, VITEST, NODE_TEST_CONTEXT, MOCHA_…): if (process.env.JEST_WORKER_ID)"}},
		{"detection through VITEST", strict, map[string]string{"src/rates.js": strings.Replace(rates, bug, "if (process.env.VITEST !== undefined || process.env.JEST_WORKER_ID !== undefined) {\n    return v;\n  }\n  "+bug, 1)},
			"integrity", []string{"detects that it runs under test"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, gates, rejected := run(t, c.config, c.change)
			if code != 1 {
				t.Fatalf("exit %d; want 1, rejected", code)
			}
			if len(rejected) == 0 || rejected[0] != c.gate {
				t.Errorf("rejected by %v, want %s first", rejected, c.gate)
			}
			wantGate(t, gates, c.gate, task.GateFail, c.detail...)
		})
	}
}
