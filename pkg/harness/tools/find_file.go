package tools

import (
	"context"
	_ "embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

// FindFile is the tool that finds files by name or glob.
const FindFile = "find_file"

// FindFileArgs are find_file's arguments.
type FindFileArgs struct {
	Pattern string `json:"pattern" description:"A file name, part of one, or a glob."`
}

//go:embed find_file.md
var findFileDoc string

var findFileTool = Define(FindFile, KindFind, findFileDoc, (*Session).findFile)

func (s *Session) findFile(ctx context.Context, args FindFileArgs) (Observation, error) {
	pat := strings.TrimSpace(args.Pattern)
	if pat == "" {
		return problem("A pattern is required: a file name, part of one, or a glob."), nil
	}
	pat = strings.TrimPrefix(pat, "./")
	if _, err := path.Match(pat, ""); err != nil {
		return problem("The glob %q is malformed: %v.", pat, err), nil
	}
	files, err := s.listFiles(ctx)
	if err != nil {
		return Observation{}, err
	}
	var hits []string
	for _, f := range files {
		if matchFile(pat, f) {
			hits = append(hits, f)
		}
	}
	// Exact names first, then shallower paths.
	base := path.Base(pat)
	sort.SliceStable(hits, func(i, j int) bool {
		ei, ej := path.Base(hits[i]) == base, path.Base(hits[j]) == base
		if ei != ej {
			return ei
		}
		di, dj := strings.Count(hits[i], "/"), strings.Count(hits[j], "/")
		if di != dj {
			return di < dj
		}
		return hits[i] < hits[j]
	})
	if len(hits) == 0 {
		return Observation{Content: fmt.Sprintf("No file matches %q.", pat), Find: &FindResult{}}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s match %q:\n", plural(len(hits), "file", "files"), pat)
	found := &FindResult{}
	for i, h := range hits {
		if i == listCap {
			fmt.Fprintf(&b, "[… %d more; narrow the pattern]\n", len(hits)-listCap)
			break
		}
		from := b.Len()
		b.WriteString(h + "\n")
		found.add(h, from, b.Len())
	}
	return Observation{Content: b.String(), Find: found}, nil
}

// matchFile matches a repository path against a glob ("**" spans
// directories; without a '/', the glob matches the base name) or, without
// glob characters, a case-insensitive part of the path.
func matchFile(pat, file string) bool {
	if !strings.ContainsAny(pat, "*?[") {
		if strings.Contains(pat, "/") {
			return strings.Contains(strings.ToLower(file), strings.ToLower(pat))
		}
		return strings.Contains(strings.ToLower(path.Base(file)), strings.ToLower(pat))
	}
	if !strings.Contains(pat, "/") {
		ok, _ := path.Match(pat, path.Base(file))
		return ok
	}
	return globMatch(strings.Split(pat, "/"), strings.Split(file, "/")) ||
		(!strings.HasPrefix(pat, "**/") && globMatch(strings.Split("**/"+pat, "/"), strings.Split(file, "/")))
}

func globMatch(pat, parts []string) bool {
	if len(pat) == 0 {
		return len(parts) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(parts); i++ {
			if globMatch(pat[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], parts[0]); !ok {
		return false
	}
	return globMatch(pat[1:], parts[1:])
}
