package gltest

import (
	"fmt"
	"slices"
	"strings"
)

// route is one endpoint as GitLab documents it: its method and path, the
// query parameters and body fields it takes, those it requires, whether
// its caller must be able to write to the project, and its handler.
type route struct {
	method, pattern string
	query           []string
	body            []string
	need            []string
	// enums are the values a parameter or field may take.
	enums  map[string][]string
	write  bool
	handle func(s *Server, c *call) reply
}

// paging are the parameters of every list.
var paging = []string{"page", "per_page"}

// routes are the endpoints the test GitLab answers. A route's handler runs
// with the lock held.
var routes []*route

func init() {
	routes = append(routes, projectRoutes()...)
	routes = append(routes, mergeRequestRoutes()...)
	routes = append(routes, pipelineRoutes()...)
	routes = append(routes, statusRoutes()...)
}

// match is the route of method and the unescaped path segments, and the
// values of its parameters.
func match(method string, segs []string) (*route, map[string]string) {
	for _, rt := range routes {
		if rt.method != method {
			continue
		}
		pat := strings.Split(strings.TrimPrefix(rt.pattern, "/"), "/")
		if len(pat) != len(segs) {
			continue
		}
		params := map[string]string{}
		ok := true
		for i, p := range pat {
			switch {
			case strings.HasPrefix(p, ":"):
				if segs[i] == "" {
					ok = false
				}
				params[p[1:]] = segs[i]
			case p != segs[i]:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok {
			return rt, params
		}
	}
	return nil, nil
}

// check says what GitLab would refuse in the request, or "".
func (rt *route) check(c *call) string {
	for name := range c.query {
		if !slices.Contains(rt.query, strings.TrimSuffix(name, "[]")) {
			return fmt.Sprintf("query parameter %q is not one the endpoint takes (%s)", name, strings.Join(rt.query, ", "))
		}
	}
	for _, name := range sortedKeys(c.body) {
		if !slices.Contains(rt.body, name) {
			return fmt.Sprintf("body field %q is not one the endpoint takes (%s)", name, strings.Join(rt.body, ", "))
		}
	}
	for _, name := range rt.need {
		if c.str(name) == "" {
			return fmt.Sprintf("%s is missing", name)
		}
	}
	for name, values := range rt.enums {
		vs := c.query[name]
		vs = append(vs, c.query[name+"[]"]...)
		if v := c.str(name); v != "" {
			vs = append(vs, v)
		}
		for _, v := range vs {
			if !slices.Contains(values, v) {
				return fmt.Sprintf("%s does not have a valid value (%q; one of %s)", name, v, strings.Join(values, ", "))
			}
		}
	}
	return ""
}
