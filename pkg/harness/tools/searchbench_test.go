package tools

// The code-search benchmark: the agent's search tools on a repository the
// size of Go's own source tree, side by side with ripgrep. It runs only with
// -bench; its setup (the tree, the query set, ripgrep, the percentiles) is
// unit-tested on a tiny tree below so that it cannot rot.
//
//	go test -run '^$' -bench SearchGoTree -benchtime 1x -v ./pkg/harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness/harnesstest"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// benchTree returns a git repository holding a copy of src, committed once.
// With cache set it is made under cache (named by key) and reused by later
// runs; an unfinished one is made again.
func benchTree(ctx context.Context, src, cache, key string) (string, error) {
	dir := filepath.Join(cache, key)
	done := dir + ".complete"
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("bench tree cache %s: %w", cache, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("clear the unfinished bench tree %s: %w", dir, err)
	}
	if err := copyTree(src, dir); err != nil {
		return "", err
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		return "", fmt.Errorf("bench tree %s: %w", dir, err)
	}
	if _, err := repo.CommitAll(ctx, "the tree"); err != nil {
		return "", fmt.Errorf("bench tree %s: %w", dir, err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		return "", fmt.Errorf("bench tree %s: %w", dir, err)
	}
	return dir, nil
}

// copyTree copies the regular files and directories of src into dst; links
// and other special files are left out, as are git directories.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("copy %s: %w", p, err)
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("copy %s: %w", p, err)
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return fmt.Errorf("copy %s: %w", p, err)
		}
		if _, err := io.Copy(out, in); err != nil {
			_ = out.Close()
			return fmt.Errorf("copy %s: %w", p, err)
		}
		return out.Close()
	})
}

// benchQueries is a realistic query set: names sampled from the tree's own
// declarations (functions, "Type.Method", types) and names that miss.
type benchQueries struct {
	funcs, types, misses []string
	// defs names, for each sampled name, the files that declare it.
	defs map[string]map[string]bool
}

func sampleQueries(idx *codeindex.Index, n int, seed int64) benchQueries {
	r := rand.New(rand.NewSource(seed))
	all := idx.All()
	var funcs, types []codeindex.Symbol
	for _, s := range all {
		if strings.HasSuffix(s.File, "_test.go") || s.Name == "_" || s.Name == "init" || s.Name == "main" {
			continue
		}
		switch s.Kind {
		case codeindex.KindFunc, codeindex.KindMethod:
			funcs = append(funcs, s)
		default:
			types = append(types, s)
		}
	}
	q := benchQueries{defs: map[string]map[string]bool{}}
	add := func(list *[]string, name, file string) {
		if q.defs[name] == nil {
			*list = append(*list, name)
			q.defs[name] = map[string]bool{}
		}
		q.defs[name][file] = true
	}
	for i := 0; i < n && len(funcs) > 0; i++ {
		s := funcs[r.Intn(len(funcs))]
		name := s.Name
		if s.Kind == codeindex.KindMethod && i%3 == 0 {
			name = s.QualifiedName()
		}
		add(&q.funcs, name, s.File)
	}
	for i := 0; i < n && len(types) > 0; i++ {
		s := types[r.Intn(len(types))]
		add(&q.types, s.Name, s.File)
	}
	// The other declarations of the sampled names count as definitions too.
	for _, s := range all {
		for _, name := range []string{s.Name, s.QualifiedName()} {
			if q.defs[name] != nil {
				q.defs[name][s.File] = true
			}
		}
	}
	for i := 0; i < max(n/5, 1); i++ {
		q.misses = append(q.misses, fmt.Sprintf("noSuchName%dQzx", r.Intn(1e6)))
	}
	return q
}

// percentile is the p-th percentile (0-100) of ds, nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// ripgrep runs rg as a person would on the command line and returns the
// files it names, in its (path-sorted) order.
func ripgrep(ctx context.Context, dir, query string, regex bool) ([]string, error) {
	args := []string{"--files-with-matches", "--sort", "path", "--no-messages"}
	if !regex {
		args = append(args, "--fixed-strings")
	}
	args = append(args, "--", query, ".")
	cmd := exec.CommandContext(ctx, "rg", args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil, nil // no match
	}
	if err != nil {
		return nil, fmt.Errorf("rg %q: %w", query, err)
	}
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l != "" {
			files = append(files, filepath.ToSlash(strings.TrimPrefix(l, "./")))
		}
	}
	return files, nil
}

// shownFiles lists the files a search_code observation names, in order.
func shownFiles(content string) []string {
	var files []string
	seen := map[string]bool{}
	for i, l := range strings.Split(content, "\n") {
		if i == 0 || strings.HasPrefix(l, "[") {
			continue
		}
		f, _, ok := strings.Cut(l, ":")
		if !ok || f == "" || seen[f] {
			continue
		}
		seen[f] = true
		files = append(files, f)
	}
	return files
}

// overlap counts the files of a that are in b.
func overlap(a, b []string) int {
	in := map[string]bool{}
	for _, f := range b {
		in[f] = true
	}
	n := 0
	for _, f := range a {
		if in[f] {
			n++
		}
	}
	return n
}

func timeAction(tb testing.TB, s *Session, name string, args any) (Observation, time.Duration) {
	tb.Helper()
	start := time.Now()
	obs, err := s.Execute(context.Background(), name, raw(args))
	d := time.Since(start)
	if err != nil {
		tb.Fatalf("%s %s: %v", name, raw(args), err)
	}
	return obs, d
}

// searchFigures are what one pass over the query set measured.
type searchFigures struct {
	methodLat, classLat, codeLat, rgLat []time.Duration
	// ourTopDef, rgTopDef: queries whose first file is a file declaring
	// the name; top10: files of our first ten also in ripgrep's first ten;
	// codeQueries: search_code queries with a hit in either.
	ourTopDef, rgTopDef, top10, top10Of, codeQueries int
}

func measureSearch(tb testing.TB, s *Session, q benchQueries, withRg bool) searchFigures {
	tb.Helper()
	f := measureSymbols(tb, s, q)
	c := measureCode(tb, s, q, withRg)
	c.methodLat, c.classLat = f.methodLat, f.classLat
	return c
}

// measureSymbols times search_method and search_class over the query set.
func measureSymbols(tb testing.TB, s *Session, q benchQueries) searchFigures {
	tb.Helper()
	var f searchFigures
	for _, name := range append(append([]string(nil), q.funcs...), q.misses...) {
		_, d := timeAction(tb, s, SearchMethod, SearchMethodArgs{Name: name})
		f.methodLat = append(f.methodLat, d)
	}
	for _, name := range append(append([]string(nil), q.types...), q.misses...) {
		_, d := timeAction(tb, s, SearchClass, SearchClassArgs{Name: name})
		f.classLat = append(f.classLat, d)
	}
	return f
}

// measureCode times search_code over the query set, and ripgrep on the
// same queries when withRg, comparing the files each names first.
func measureCode(tb testing.TB, s *Session, q benchQueries, withRg bool) searchFigures {
	tb.Helper()
	var f searchFigures
	var code []string
	for i, name := range q.funcs {
		if !strings.Contains(name, ".") && i%2 == 0 {
			code = append(code, name)
		}
	}
	for i, name := range q.types {
		if i%2 == 0 {
			code = append(code, name)
		}
	}
	code = append(code, q.misses...)
	for _, query := range code {
		obs, d := timeAction(tb, s, SearchCode, SearchCodeArgs{Query: query})
		f.codeLat = append(f.codeLat, d)
		ours := shownFiles(obs.Content)
		if !withRg {
			continue
		}
		start := time.Now()
		theirs, err := ripgrep(context.Background(), s.ws.Dir, query, false)
		f.rgLat = append(f.rgLat, time.Since(start))
		if err != nil {
			tb.Fatal(err)
		}
		if len(ours) == 0 && len(theirs) == 0 {
			continue
		}
		f.codeQueries++
		if len(ours) > 0 && q.defs[query][ours[0]] {
			f.ourTopDef++
		}
		if len(theirs) > 0 && q.defs[query][theirs[0]] {
			f.rgTopDef++
		}
		f.top10 += overlap(ours[:min(len(ours), 10)], theirs[:min(len(theirs), 10)])
		f.top10Of += min(10, len(theirs))
	}
	return f
}

var goTree struct {
	once sync.Once
	dir  string
	err  error
}

// goTreeWorkspace is a workspace cloned from the cached repository of
// $(go env GOROOT)/src.
func goTreeWorkspace(b *testing.B) *workspace.Workspace {
	b.Helper()
	goTree.once.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		start := time.Now()
		key := "gosrc-" + strings.ReplaceAll(runtime.Version(), " ", "_")
		goTree.dir, goTree.err = benchTree(context.Background(), filepath.Join(runtime.GOROOT(), "src"), filepath.Join(cache, "redfix-bench"), key)
		b.Logf("tree %s ready in %s", goTree.dir, time.Since(start).Round(time.Millisecond))
	})
	if goTree.err != nil {
		b.Fatal(goTree.err)
	}
	ws, err := workspace.Open(context.Background(), goTree.dir, "HEAD", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ws.Close() })
	return ws
}

func taskForBench() task.Task {
	return task.Task{ID: "bench", Repo: "go"}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkSearchGoTree prints the figures of the code search on Go's own
// source tree: index build time and memory, search_method and search_class
// latency, search_code next to ripgrep with the ranking compared, and the
// index update after an edit.
func BenchmarkSearchGoTree(b *testing.B) {
	if _, err := exec.LookPath("rg"); err != nil {
		b.Fatal("ripgrep (rg) is needed to compare with: install it")
	}
	ws := goTreeWorkspace(b)
	b.Run("index", func(b *testing.B) {
		var before, after runtime.MemStats
		var idx *codeindex.Index
		for i := 0; i < b.N; i++ {
			idx = nil
			runtime.GC()
			runtime.ReadMemStats(&before)
			var err error
			if idx, err = codeindex.BuildWith(ws.Dir, golang.IndexParser); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		runtime.ReadMemStats(&after)
		allocs := after.Mallocs - before.Mallocs
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(idx.Len()), "symbols")
		b.ReportMetric(float64(after.HeapInuse-min(before.HeapInuse, after.HeapInuse))/(1<<20), "heap-MB")
		b.ReportMetric(float64(allocs), "allocs/build")
		runtime.KeepAlive(idx)
	})
	s := NewSession(Env{Lang: harnesstest.Go(), OutputLimit: 8000, TestRunFloor: 2 * time.Minute}, ws, taskForBench(), All())
	defer s.Close()
	if _, err := s.index(); err != nil {
		b.Fatal(err)
	}
	q := sampleQueries(s.idx, benchQueryCount, 1)
	b.Run("symbols", func(b *testing.B) {
		var f searchFigures
		for i := 0; i < b.N; i++ {
			f = measureSymbols(b, s, q)
		}
		b.StopTimer()
		b.ReportMetric(ms(percentile(f.methodLat, 50)), "method-p50-ms")
		b.ReportMetric(ms(percentile(f.methodLat, 99)), "method-p99-ms")
		b.ReportMetric(ms(percentile(f.classLat, 50)), "class-p50-ms")
		b.ReportMetric(ms(percentile(f.classLat, 99)), "class-p99-ms")
		var lookups []time.Duration
		for _, name := range append(append(append([]string(nil), q.funcs...), q.types...), q.misses...) {
			start := time.Now()
			s.idx.FindFuncs(name)
			s.idx.FindTypes(name)
			lookups = append(lookups, time.Since(start))
		}
		b.ReportMetric(ms(percentile(lookups, 50)), "lookup-p50-ms")
		b.ReportMetric(ms(percentile(lookups, 99)), "lookup-p99-ms")
	})
	b.Run("code", func(b *testing.B) {
		// The session's first search_code reads every file and makes the
		// text index as it goes: timed on its own, as the symbol index's
		// build is.
		_, first := timeAction(b, s, SearchCode, SearchCodeArgs{Query: "noSuchNameBeforeTheBench"})
		var f searchFigures
		for i := 0; i < b.N; i++ {
			f = measureCode(b, s, q, true)
		}
		b.StopTimer()
		p50, p99 := percentile(f.codeLat, 50), percentile(f.codeLat, 99)
		rg50, rg99 := percentile(f.rgLat, 50), percentile(f.rgLat, 99)
		b.ReportMetric(ms(first), "first-search-ms")
		b.ReportMetric(ms(p50), "code-p50-ms")
		b.ReportMetric(ms(p99), "code-p99-ms")
		b.ReportMetric(ms(rg50), "rg-p50-ms")
		b.ReportMetric(ms(rg99), "rg-p99-ms")
		b.ReportMetric(float64(rg50)/float64(max(p50, 1)), "rg/code-p50")
		b.ReportMetric(float64(rg99)/float64(max(p99, 1)), "rg/code-p99")
		b.Logf("search_code on %d queries: p50 %.1f ms, p99 %.1f ms; ripgrep on the same: p50 %.1f ms, p99 %.1f ms; ripgrep/search_code: %.1f× at p50, %.1f× at p99; the session's first search (which makes the text index) %.0f ms",
			len(f.codeLat), ms(p50), ms(p99), ms(rg50), ms(rg99), float64(rg50)/float64(max(p50, 1)), float64(rg99)/float64(max(p99, 1)), ms(first))
		b.ReportMetric(float64(f.ourTopDef)/float64(max(f.codeQueries, 1)), "top1-def-ours")
		b.ReportMetric(float64(f.rgTopDef)/float64(max(f.codeQueries, 1)), "top1-def-rg")
		b.ReportMetric(float64(f.top10)/float64(max(f.top10Of, 1)), "top10-overlap")
		b.Logf("search_code over %d queries with a hit: our first file declares the name in %d, ripgrep's (path order) in %d; top-10 files in common with ripgrep: %d of %d",
			f.codeQueries, f.ourTopDef, f.rgTopDef, f.top10, f.top10Of)
	})
	b.Run("edit", func(b *testing.B) {
		var lat []time.Duration
		for i := 0; i < b.N; i++ {
			lat = measureEdits(b, s, q, 50)
		}
		b.StopTimer()
		b.ReportMetric(ms(percentile(lat, 50)), "reindex-p50-ms")
		b.ReportMetric(ms(percentile(lat, 99)), "reindex-p99-ms")
	})
}

// measureEdits adds a function to each of n files declaring a sampled
// name and times the index update the edit tool makes after writing a file
// (the rest of an edit, static analysis, is not the index's).
func measureEdits(tb testing.TB, s *Session, q benchQueries, n int) []time.Duration {
	tb.Helper()
	var lat []time.Duration
	for i, name := range q.funcs {
		if len(lat) == n {
			break
		}
		var file string
		for f := range q.defs[name] {
			file = f
			break
		}
		abs := filepath.Join(s.ws.Dir, filepath.FromSlash(file))
		data, err := os.ReadFile(abs)
		if err != nil {
			tb.Fatal(err)
		}
		added := fmt.Sprintf("BenchAdded%d", i)
		if err := os.WriteFile(abs, append(data, fmt.Sprintf("\nfunc %s() {}\n", added)...), 0o644); err != nil {
			tb.Fatal(err)
		}
		start := time.Now()
		s.reindex(file)
		lat = append(lat, time.Since(start))
		if got := s.idx.FindFuncs(added); len(got) != 1 || s.idxStale {
			tb.Fatalf("%s is not found after the edit of %s: %+v", added, file, got)
		}
	}
	return lat
}

// benchQueryCount is how many names of each kind the benchmark samples.
const benchQueryCount = 200
