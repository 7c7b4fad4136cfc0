package tools

import (
	"context"
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/untrusted"
)

// ReadDirectory is the tool that lists a directory's entries.
const ReadDirectory = "read_directory"

// ReadDirectoryArgs are read_directory's arguments: an empty Path is the
// repository's root.
type ReadDirectoryArgs struct {
	Path string `json:"path,omitempty" description:"Directory path relative to the repository root."`
}

//go:embed read_directory.md
var readDirectoryDoc string

var readDirectoryTool = Define(ReadDirectory, KindOther, readDirectoryDoc, (*Session).readDirectory)

func (s *Session) readDirectory(_ context.Context, args ReadDirectoryArgs) (Observation, error) {
	_, rel, bad := s.resolve(args.Path)
	if bad != nil {
		return *bad, nil
	}
	entries, err := untrusted.ReadDir(s.ws.Dir, rel)
	if err != nil {
		if info, serr := untrusted.Lstat(s.ws.Dir, rel); serr == nil && info.Mode().IsRegular() {
			return problem("%s is a file; use read_file.", rel), nil
		}
		return problem("Cannot read the directory %s: %v.", rel, err), nil
	}
	var names []string
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	// Directories first, as people expect.
	sort.SliceStable(names, func(i, j int) bool {
		di, dj := strings.HasSuffix(names[i], "/"), strings.HasSuffix(names[j], "/")
		if di != dj {
			return di
		}
		return names[i] < names[j]
	})
	var b strings.Builder
	shown := rel
	if shown == "." {
		shown = "the repository root"
	}
	fmt.Fprintf(&b, "%s (%s):\n", shown, plural(len(names), "entry", "entries"))
	for i, n := range names {
		if i == listCap {
			fmt.Fprintf(&b, "[… %d more entries]\n", len(names)-listCap)
			break
		}
		b.WriteString(n + "\n")
	}
	return Observation{Content: b.String()}, nil
}
