package node

import (
	"encoding/json"
	"strings"

	"github.com/redfix/redfix/pkg/untrusted"
)

// maxCoverageFiles bounds the V8 coverage files read of one run.
const maxCoverageFiles = 256

// v8Lines reads the coverage V8 wrote (NODE_V8_COVERAGE) into the outbox
// directory name: the lines of the checkout's code files whose first
// character ran. A line's count is that of the innermost range (of a
// function or block) holding it; the scripts are the files as they are on
// disk, which mocha and node:test load untransformed.
func v8Lines(s *session, name string) ([]line, error) {
	ents, err := untrusted.ReadDir(s.outbox, name)
	if err != nil {
		return nil, err
	}
	type rng struct{ start, end, count int }
	scripts := map[string][]rng{}
	for i, e := range ents {
		if i >= maxCoverageFiles {
			break
		}
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := untrusted.ReadFile(s.outbox, name+"/"+e.Name(), maxCoverageBytes)
		if err != nil {
			continue
		}
		var rep struct {
			Result []struct {
				URL       string `json:"url"`
				Functions []struct {
					Ranges []struct {
						StartOffset int `json:"startOffset"`
						EndOffset   int `json:"endOffset"`
						Count       int `json:"count"`
					} `json:"ranges"`
				} `json:"functions"`
			} `json:"result"`
		}
		if json.Unmarshal(data, &rep) != nil {
			continue
		}
		for _, r := range rep.Result {
			if !strings.HasPrefix(r.URL, "file://") {
				continue
			}
			file, ok := codeFile(s, r.URL)
			if !ok {
				continue
			}
			for _, f := range r.Functions {
				for _, g := range f.Ranges {
					scripts[file] = append(scripts[file], rng{g.StartOffset, g.EndOffset, g.Count})
				}
			}
		}
	}
	var out []line
	for file, ranges := range scripts {
		src, err := untrusted.ReadFile(s.dir, file, maxSourceBytes)
		if err != nil {
			continue
		}
		off := 0
		for i, l := range strings.SplitAfter(string(src), "\n") {
			first := off + len(l) - len(strings.TrimLeft(l, " \t"))
			off += len(l)
			if strings.TrimSpace(l) == "" {
				continue
			}
			best, count := -1, 0
			for _, r := range ranges {
				if first >= r.start && first < r.end && (best < 0 || r.end-r.start < best) {
					best, count = r.end-r.start, r.count
				}
			}
			if best >= 0 && count > 0 {
				out = append(out, line{file, i + 1})
			}
		}
	}
	return out, nil
}
