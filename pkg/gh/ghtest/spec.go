package ghtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
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

func loadDescription(path string) (*Description, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	// Requests reach the test server on loopback, not api.github.com: match
	// on the path alone.
	doc.Servers = openapi3.Servers{{URL: "/"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", path, err)
	}
	d := &Description{Doc: doc, Router: router, examples: map[string]json.RawMessage{}}
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
// has no such endpoint.
func (d *Description) FindRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	return d.Router.FindRoute(req)
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
