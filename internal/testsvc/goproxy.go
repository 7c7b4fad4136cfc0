package testsvc

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GoModuleProxy lays out a Go module cache in dir (its cache/download, so
// that dir serves as GOMODCACHE) and a module proxy beside it, in
// dir/proxy, serving the module path at version with files (its go.mod
// among them, or a plain one). It returns the proxy's GOPROXY value
// (file://…): a proxy the go command reads with no network, from inside a
// sandbox too.
func GoModuleProxy(t testing.TB, dir, path, version string, files map[string]string) string {
	t.Helper()
	at := filepath.Join(append([]string{dir, "proxy"}, append(strings.Split(path, "/"), "@v")...)...)
	for _, d := range []string{at, filepath.Join(dir, "cache", "download")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mod, ok := files["go.mod"]
	if !ok {
		mod = "module " + path + "\n\ngo 1.21\n"
		files["go.mod"] = mod
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, data := range files {
		w, err := zw.Create(path + "@" + version + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"list": version + "\n", version + ".info": `{"Version":"` + version + `"}`, version + ".mod": mod, version + ".zip": zb.String()} {
		if err := os.WriteFile(filepath.Join(at, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return "file://" + filepath.ToSlash(filepath.Join(dir, "proxy"))
}
