package ghtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Description is GitHub's REST description, loaded once per test binary, with
// a router that finds the operation of a request.
type Description struct {
	Doc    *openapi3.T
	Router routers.Router
	// all routes every operation GitHub has, described or not.
	all routers.Router
	// examples holds each operation's example responses, raw, by
	// "METHOD path-template status".
	examples map[string]json.RawMessage
}

var (
	descOnce sync.Once
	desc     *Description
	descErr  error
)

// LoadDescription loads GitHub's REST description (see OctokitDir); the
// first call in a test binary parses it, later calls share it.
func LoadDescription(t testing.TB) *Description {
	t.Helper()
	path := RESTDescription(t)
	descOnce.Do(func() { desc, descErr = loadDescription(path) })
	if descErr != nil {
		t.Fatalf("load GitHub's REST description: %v", descErr)
	}
	return desc
}

// DescribedPrefixes are the parts of GitHub's API that the server checks
// against the description: the operations whose path template is one of them
// or lies under one (a "=" in front means that template alone) are loaded
// with the components they use; the rest of the 13 MB description is not,
// which keeps loading it fast. A call outside them is reported as such: add
// the prefix here when adding an endpoint.
var DescribedPrefixes = []string{
	"/app",
	"/installation",
	"=/repos/{owner}/{repo}",
	"/repos/{owner}/{repo}/installation",
	"/repos/{owner}/{repo}/pulls",
	"/repos/{owner}/{repo}/issues",
	"/repos/{owner}/{repo}/labels",
	"/repos/{owner}/{repo}/git",
	"/repos/{owner}/{repo}/commits",
	"/repos/{owner}/{repo}/contents",
	"/repos/{owner}/{repo}/branches",
	"/repos/{owner}/{repo}/collaborators",
	"/repos/{owner}/{repo}/actions",
	"/repos/{owner}/{repo}/check-runs",
	"/repos/{owner}/{repo}/check-suites",
	"/repos/{owner}/{repo}/hooks",
}

func described(tmpl string) bool {
	for _, p := range DescribedPrefixes {
		if exact, ok := strings.CutPrefix(p, "="); ok {
			if tmpl == exact {
				return true
			}
			continue
		}
		if tmpl == p || strings.HasPrefix(tmpl, p+"/") {
			return true
		}
	}
	return false
}

func loadDescription(path string) (*Description, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	trimmed, all, err := cachedTrim(path, data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(trimmed)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	allRouter, err := gorillamux.NewRouter(all)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", path, err)
	}
	// Requests reach the test server on loopback, not api.github.com: match
	// on the path alone.
	doc.Servers = openapi3.Servers{{URL: "/"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", path, err)
	}
	d := &Description{Doc: doc, Router: router, all: allRouter, examples: map[string]json.RawMessage{}}
	for tmpl, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Responses == nil {
				continue
			}
			for status, ref := range op.Responses.Map() {
				if ref == nil || ref.Value == nil {
					continue
				}
				mt := ref.Value.Content.Get("application/json")
				if mt == nil {
					continue
				}
				for _, ex := range mt.Examples {
					if ex == nil || ex.Value == nil {
						continue
					}
					raw, err := json.Marshal(ex.Value.Value)
					if err != nil {
						continue
					}
					key := method + " " + tmpl + " " + status
					if _, ok := d.examples[key]; !ok {
						d.examples[key] = raw
					}
				}
			}
		}
	}
	return d, nil
}

// Example is a fresh copy of the example GitHub publishes for the response
// of an operation (method and path template as the description writes them,
// e.g. "POST", "/repos/{owner}/{repo}/pulls", 201). Handlers start from it and
// set the fields their state decides, so that every response carries all the
// fields GitHub's own does.
func (d *Description) Example(method, tmpl string, status int) (map[string]any, error) {
	raw, ok := d.examples[strings.ToUpper(method)+" "+tmpl+" "+fmt.Sprint(status)]
	if !ok {
		return nil, fmt.Errorf("no published example for %s %s %d", method, tmpl, status)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("example for %s %s %d is not an object: %w", method, tmpl, status, err)
	}
	return v, nil
}

// ExampleList is Example for operations that answer with an array.
func (d *Description) ExampleList(method, tmpl string, status int) ([]any, error) {
	raw, ok := d.examples[strings.ToUpper(method)+" "+tmpl+" "+fmt.Sprint(status)]
	if !ok {
		return nil, fmt.Errorf("no published example for %s %s %d", method, tmpl, status)
	}
	var v []any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("example for %s %s %d is not an array: %w", method, tmpl, status, err)
	}
	return v, nil
}

// validationOptions: authentication is the server's own business (it
// checks tokens itself); everything else is checked.
func validationOptions() *openapi3filter.Options {
	return &openapi3filter.Options{
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		MultiError:         true,
	}
}

// FindRoute finds the operation that req calls, or an error saying GitHub
// has no such endpoint, or that it is outside DescribedPrefixes.
func (d *Description) FindRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	route, params, err := d.Router.FindRoute(req)
	if err == nil {
		return route, params, nil
	}
	if r, _, err2 := d.all.FindRoute(req); err2 == nil {
		return nil, nil, fmt.Errorf("%s %s is GitHub's but outside the described part of the API (add its prefix to ghtest.DescribedPrefixes): %w", req.Method, r.Path, errOutside)
	}
	return nil, nil, err
}

var errOutside = errors.New("not loaded")

// trimDescription keeps the described operations and the components they
// reach, and lists every operation (without its details) for routing.
func trimDescription(data []byte) ([]byte, map[string][]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, err
	}
	var paths map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top["paths"], &paths); err != nil {
		return nil, nil, fmt.Errorf("paths: %w", err)
	}
	var comps map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top["components"], &comps); err != nil {
		return nil, nil, fmt.Errorf("components: %w", err)
	}
	all := map[string][]string{}
	keptPaths := map[string]map[string]json.RawMessage{}
	var queue []json.RawMessage
	for tmpl, item := range paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options":
				all[tmpl] = append(all[tmpl], strings.ToUpper(method))
			}
		}
		if described(tmpl) {
			keptPaths[tmpl] = item
			for _, raw := range item {
				queue = append(queue, raw)
			}
		}
	}
	keptComps := map[string]map[string]json.RawMessage{}
	for len(queue) > 0 {
		raw := queue[0]
		queue = queue[1:]
		for _, ref := range refsIn(raw) {
			parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
			if len(parts) != 2 {
				continue
			}
			kind, name := parts[0], parts[1]
			if keptComps[kind] == nil {
				keptComps[kind] = map[string]json.RawMessage{}
			}
			if _, ok := keptComps[kind][name]; ok {
				continue
			}
			c, ok := comps[kind][name]
			if !ok {
				continue
			}
			keptComps[kind][name] = c
			queue = append(queue, c)
		}
	}
	out := map[string]any{
		"openapi":    json.RawMessage(top["openapi"]),
		"info":       json.RawMessage(top["info"]),
		"paths":      keptPaths,
		"components": keptComps,
	}
	trimmed, err := json.Marshal(out)
	if err != nil {
		return nil, nil, err
	}
	return trimmed, all, nil
}

// cachedTrim is trimDescription, kept next to the description so that the
// next test binary reads the small file (it takes seconds under -race).
func cachedTrim(path string, data []byte) ([]byte, *openapi3.T, error) {
	sum := sha256.Sum256(append(append([]byte{}, data...), strings.Join(DescribedPrefixes, "\n")...))
	cache := filepath.Join(filepath.Dir(path), fmt.Sprintf(".ghtest-%x.json", sum[:8]))
	if cached, err := os.ReadFile(cache); err == nil {
		var c struct {
			Trimmed json.RawMessage     `json:"trimmed"`
			All     map[string][]string `json:"all"`
		}
		if json.Unmarshal(cached, &c) == nil && len(c.Trimmed) > 0 {
			return c.Trimmed, allRoutes(c.All), nil
		}
	}
	trimmed, all, err := trimDescription(data)
	if err != nil {
		return nil, nil, err
	}
	if out, err := json.Marshal(map[string]any{"trimmed": json.RawMessage(trimmed), "all": all}); err == nil {
		tmp := fmt.Sprintf("%s.%d.tmp", cache, os.Getpid())
		if os.WriteFile(tmp, out, 0o644) == nil {
			_ = os.Rename(tmp, cache) // best effort: a read-only directory only costs time
		}
	}
	return trimmed, allRoutes(all), nil
}

// allRoutes is a description holding every operation's method and path, for
// telling "GitHub has no such endpoint" from "not described here".
func allRoutes(all map[string][]string) *openapi3.T {
	doc := &openapi3.T{OpenAPI: "3.0.3", Info: &openapi3.Info{Title: "all", Version: "0"}, Paths: openapi3.NewPaths(), Servers: openapi3.Servers{{URL: "/"}}}
	for tmpl, methods := range all {
		pi := &openapi3.PathItem{}
		for _, m := range methods {
			pi.SetOperation(m, &openapi3.Operation{Responses: openapi3.NewResponses()})
		}
		doc.Paths.Set(tmpl, pi)
	}
	return doc
}

// refsIn lists the "$ref" values in a JSON document.
func refsIn(raw json.RawMessage) []string {
	var refs []string
	key := []byte(`"$ref"`)
	for i := 0; ; {
		j := bytes.Index(raw[i:], key)
		if j < 0 {
			return refs
		}
		i += j + len(key)
		rest := bytes.TrimLeft(raw[i:], " \t\r\n:")
		if len(rest) == 0 || rest[0] != '"' {
			continue
		}
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 {
			return refs
		}
		refs = append(refs, string(rest[1:1+end]))
	}
}

// ValidateRequest checks req (whose body is in body) against the operation
// it calls.
func (d *Description) ValidateRequest(ctx context.Context, req *http.Request, route *routers.Route, params map[string]string) error {
	return openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route, Options: validationOptions(),
	})
}

// ValidateResponse checks a response against the operation's description.
func (d *Description) ValidateResponse(ctx context.Context, req *http.Request, route *routers.Route, params map[string]string, status int, header http.Header, body []byte) error {
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route, Options: validationOptions(),
		},
		Status:  status,
		Header:  header,
		Options: validationOptions(),
	}
	in.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(ctx, in)
}
