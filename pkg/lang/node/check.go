package node

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/untrusted"
)

// maxCheckReport bounds eslint's report read back.
const maxCheckReport = 16 << 20

// Check runs the static checks an edit of the files is held to, with the
// repository's own tools from its node_modules: tsc --noEmit -p . when the
// checkout has a tsconfig.json at its root and typescript installed (the
// whole project: a changed signature breaks its callers elsewhere), and
// eslint on the files when the repository configures it (an
// eslint.config.* or .eslintrc* at the root, eslint installed). Findings
// are keyed by tool, file, rule and message without positions ("tsc:
// src/price.ts: TS2322: Type 'string' is not assignable to type
// 'number'."), so that a caller comparing with a base (findings.Compare)
// counts only what a change brought. With no JavaScript or TypeScript
// file among files, or neither tool, there is nothing to check.
func (d Driver) Check(ctx context.Context, dir string, files []string) ([]findings.Finding, error) {
	var srcs []string
	for _, f := range files {
		rel, ok := cleanRel(f)
		if !ok || !isSourceExt(path.Ext(rel)) || inSkippedDir(rel) {
			continue
		}
		if fi, err := untrusted.Lstat(dir, rel); err == nil && fi.Mode().IsRegular() {
			srcs = append(srcs, rel)
		}
	}
	if len(srcs) == 0 {
		return nil, nil
	}
	_, tsErr := untrusted.Lstat(dir, "tsconfig.json")
	lint := eslintConfigured(dir)
	if tsErr != nil && !lint {
		return nil, nil
	}
	s, err := d.session(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("node checks: %w", err)
	}
	defer s.done()
	var fs []findings.Finding
	if tsErr == nil && s.has("typescript/bin/tsc") {
		res, err := s.run(ctx, "tsc", d.CheckTimeout, []string{s.node, s.bin("typescript/bin/tsc"), "--noEmit", "-p", ".", "--pretty", "false"})
		if err != nil {
			return nil, fmt.Errorf("node checks: %w", err)
		}
		if res.TimedOut {
			fs = append(fs, findings.Finding{Key: "tsc: timed out", Text: "tsc: timed out"})
		} else {
			fs = append(fs, tscFindings(res.Output, dir)...)
		}
	}
	if lint && s.has("eslint/bin/eslint.js") {
		lf, err := d.eslint(ctx, s, srcs)
		if err != nil {
			return nil, err
		}
		fs = append(fs, lf...)
	}
	return fs, nil
}

// has reports a file of node_modules, as the checkout's commands see it.
func (s *session) has(rel string) bool {
	if s.modules == "" {
		return false
	}
	fi, err := untrusted.Lstat(s.modules, rel)
	return err == nil && fi.Mode().IsRegular()
}

// eslintConfigured reports an eslint configuration at the checkout's root.
func eslintConfigured(dir string) bool {
	ents, err := untrusted.ReadDir(dir, ".")
	if err != nil {
		return false
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, "eslint.config.") || strings.HasPrefix(n, ".eslintrc") {
			return true
		}
	}
	return false
}

// tscLineRE is a diagnostic of tsc --pretty false: "src/x.ts(3,5): error
// TS2322: message".
var tscLineRE = regexp.MustCompile(`^(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$`)

// tscFindings reads tsc's diagnostics; a diagnostic without a file (a bad
// tsconfig.json) is keyed by its code and message.
func tscFindings(out, dir string) []findings.Finding {
	var fs []findings.Finding
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, "\r")
		if m := tscLineRE.FindStringSubmatch(l); m != nil {
			file := relative(m[1], dir, aliasesOf(dir))
			fs = append(fs, findings.Finding{
				Key:  fmt.Sprintf("tsc: %s: %s: %s", file, m[5], m[6]),
				Text: fmt.Sprintf("tsc: %s:%s:%s: %s: %s", file, m[2], m[3], m[5], m[6]),
			})
			continue
		}
		if rest, ok := strings.CutPrefix(l, "error "); ok && strings.HasPrefix(rest, "TS") {
			fs = append(fs, findings.Finding{Key: "tsc: " + rest, Text: "tsc: " + rest})
		}
	}
	return fs
}

// eslint lints the files with the repository's eslint and configuration,
// its JSON report written into the outbox.
func (d Driver) eslint(ctx context.Context, s *session, files []string) ([]findings.Finding, error) {
	report := "eslint.json"
	args := append([]string{s.node, s.bin("eslint/bin/eslint.js"), "--format", "json", "--output-file", s.outbox + "/" + report, "--no-warn-ignored", "--"}, files...)
	res, err := s.run(ctx, "eslint", d.CheckTimeout, args)
	if err != nil {
		return nil, fmt.Errorf("node checks: %w", err)
	}
	if res.TimedOut {
		return []findings.Finding{{Key: "eslint: timed out", Text: "eslint: timed out"}}, nil
	}
	data, err := s.readOutbox(report, maxCheckReport)
	if err != nil {
		// eslint stopped before its report: its configuration does not
		// load. That is a finding of the configuration, not of the files.
		msg := firstLine(res.Output)
		return []findings.Finding{{Key: "eslint: " + msg, Text: "eslint: " + strings.TrimSpace(res.Output)}}, nil
	}
	var rep []struct {
		FilePath string `json:"filePath"`
		Messages []struct {
			RuleID   string `json:"ruleId"`
			Severity int    `json:"severity"`
			Message  string `json:"message"`
			Line     int    `json:"line"`
			Column   int    `json:"column"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("node checks: read eslint's report: %w", err)
	}
	var fs []findings.Finding
	for _, f := range rep {
		file := relative(f.FilePath, s.dir, aliasesOf(s.dir))
		for _, m := range f.Messages {
			if m.Severity < 2 {
				continue
			}
			rule := m.RuleID
			if rule == "" {
				rule = "error"
			}
			fs = append(fs, findings.Finding{
				Key:  fmt.Sprintf("eslint: %s: %s: %s", file, rule, m.Message),
				Text: fmt.Sprintf("eslint: %s:%d:%d: %s: %s", file, m.Line, m.Column, rule, m.Message),
			})
		}
	}
	return fs, nil
}
