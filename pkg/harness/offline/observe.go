package offline

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
)

// Observing: what each step showed goes into the state, read from the
// observation's structured parts, never from its text.

// observe takes in one step of the episode: the policy's own (whose intent
// says what to make of it) or another's. What the step's tool is (its
// kind, as the episode's tools say) says what its observation tells.
func (s *state) observe(step harness.Step, kind tools.Kind) {
	a, obs := step.Action, step.Observation
	in := intentNone
	if s.pending != nil && a.Name == s.pending.Name && bytes.Equal(a.Args, s.pending.Args) {
		in = s.intent
	}
	s.pending, s.intent = nil, intentNone
	s.attempted[key(a)] = true
	switch kind {
	case tools.KindTask:
		s.sawTask = true
	case tools.KindCommit:
		s.diffTried = true
		if !obs.IsError && obs.Commit != nil {
			// What could be read is evidence even when the rest cannot.
			s.diffs, _ = unidiff.Parse(obs.Commit.Diff)
		}
	case tools.KindTests:
		switch in {
		case intentTest:
			s.afterTest(obs)
			return
		case intentRegress:
			s.afterRegress(obs)
			return
		case intentLocalize:
			s.afterLocalize(obs)
			return
		}
		if s.repro == nil {
			s.reproTried = true
			if obs.Tests != nil {
				t := *obs.Tests
				s.repro = &t
				s.failures = append(append([]task.Failure(nil), t.Failed...), t.Build...)
			}
		}
	case tools.KindListing:
		var args struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(a.Args, &args)
		if obs.IsError || args.Path == "" {
			if in == intentRefresh {
				s.mode = modeStuck
			}
			return
		}
		if in == intentRefresh {
			// What the file is now: start from scratch.
			s.models[args.Path] = newFileModel(args.Path, s.p.langs.of(args.Path))
		}
		m := s.models[args.Path]
		if m == nil {
			m = newFileModel(args.Path, s.p.langs.of(args.Path))
			s.models[args.Path] = m
		}
		s.readListing(m, obs.Listing)
		if in == intentRefresh {
			s.afterRefresh(args.Path)
		}
	case tools.KindFind:
		var args struct {
			Pattern string `json:"pattern"`
		}
		_ = json.Unmarshal(a.Args, &args)
		s.found[args.Pattern] = nil
		if !obs.IsError && obs.Find != nil {
			s.found[args.Pattern] = s.p.langs.codeFiles(obs.Find.Files)
		}
	case tools.KindDefinitions:
		var args struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(a.Args, &args)
		// A search that found nothing may suggest other names, with their
		// places: those are not where the name is.
		s.methods[args.Name] = nil
		if !obs.IsError {
			s.methods[args.Name] = s.p.langs.places(obs)
		}
	case tools.KindEdit:
		switch in {
		case intentApply:
			s.afterApply(obs)
		case intentUndo, intentRestore:
			s.afterUndo(obs)
		}
	}
}

// readListing adds the lines a listing showed to the model. A long file's
// listing stops short of its end: the model is made as long as the file,
// its lines unknown where not shown, so that it does not pass for the whole
// file.
func (s *state) readListing(m *fileModel, l *tools.ListingResult) {
	if l == nil {
		return
	}
	for _, line := range l.Lines {
		// The copy holds no carriage return at a line's end: the blocks
		// written from it would lose it anyway, as the harness reads a
		// block's CRLF as LF.
		m.set(line.N, strings.TrimSuffix(line.Text, "\r"))
	}
	m.extend(l.Total)
}

// codeFiles are the files among files in a language the templates know
// (a driver owns them).
func (ls languages) codeFiles(files []string) []string {
	var out []string
	for _, f := range files {
		if ls.of(f) != nil {
			out = append(out, f)
		}
	}
	return out
}

// places are where a search found what it looked for, in code files: the
// symbols a symbol search found, or the lines a code search matched.
func (ls languages) places(obs tools.Observation) []location {
	var out []location
	if obs.Symbols != nil {
		for _, sym := range obs.Symbols.Symbols {
			out = append(out, location{path: sym.File, line: sym.Line})
		}
	}
	if obs.Search != nil {
		for _, h := range obs.Search.Hits {
			if ls.of(h.File) != nil {
				out = append(out, location{path: h.File, line: h.Line})
			}
		}
	}
	return out
}
