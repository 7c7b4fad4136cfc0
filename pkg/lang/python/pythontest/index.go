package pythontest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Wheel is a pure-Python wheel of the project name at version, holding
// the files (paths inside the wheel), made as the wheel format says: a zip
// with the package, and a .dist-info with METADATA, WHEEL and a RECORD of
// every file's hash. It returns the wheel's file name and content.
func Wheel(t testing.TB, name, version string, files map[string]string) (filename string, data []byte) {
	t.Helper()
	dist := strings.ReplaceAll(name, "-", "_")
	info := fmt.Sprintf("%s-%s.dist-info", dist, version)
	all := map[string]string{}
	for k, v := range files {
		all[k] = v
	}
	all[info+"/METADATA"] = fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version)
	all[info+"/WHEEL"] = "Wheel-Version: 1.0\nGenerator: redfix-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	var names []string
	for k := range all {
		names = append(names, k)
	}
	slices.Sort(names)
	var record strings.Builder
	for _, n := range names {
		sum := sha256.Sum256([]byte(all[n]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(sum[:]), len(all[n]))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", info)
	all[info+"/RECORD"] = record.String()
	names = append(names, info+"/RECORD")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(all[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s-%s-py3-none-any.whl", dist, version), buf.Bytes()
}

// Index serves distributions (wheels, sdists) as a PEP 503 simple
// repository on loopback, under /simple/, and records the requests it
// answers.
type Index struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
}

// NewIndex serves dists, by file name, until t ends.
func NewIndex(t testing.TB, dists map[string][]byte) *Index {
	t.Helper()
	ix := &Index{}
	byProject := map[string][]string{}
	for fn := range dists {
		project := strings.ReplaceAll(strings.ToLower(strings.SplitN(fn, "-", 2)[0]), "_", "-")
		byProject[project] = append(byProject[project], fn)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/{project}/", func(w http.ResponseWriter, r *http.Request) {
		fns, ok := byProject[r.PathValue("project")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "<!DOCTYPE html><html><body>\n")
		for _, fn := range fns {
			sum := sha256.Sum256(dists[fn])
			fmt.Fprintf(w, "<a href=\"/files/%s#sha256=%s\">%s</a>\n", fn, hex.EncodeToString(sum[:]), fn)
		}
		fmt.Fprint(w, "</body></html>\n")
	})
	mux.HandleFunc("/files/{file}", func(w http.ResponseWriter, r *http.Request) {
		data, ok := dists[r.PathValue("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	})
	ix.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ix.mu.Lock()
		ix.requests = append(ix.requests, r.URL.Path)
		ix.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(ix.Close)
	return ix
}

// Requests are the paths asked so far, in order.
func (ix *Index) Requests() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return append([]string(nil), ix.requests...)
}

// Count is how many requests were answered.
func (ix *Index) Count() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.requests)
}
