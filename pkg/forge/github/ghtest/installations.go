package ghtest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Installation is the App installed on an account's repositories.
type Installation struct {
	ID      int64
	Account string
	Repos   map[string]bool // "owner/repo"
	// TokensIssued counts the access tokens minted for it.
	TokensIssued int
}

// Install installs the App on repos ("owner/repo") and returns the
// installation. It takes the lock.
func (s *Server) Install(account string, repos ...string) *Installation {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := &Installation{ID: s.NewID(), Account: account, Repos: map[string]bool{}}
	for _, r := range repos {
		in.Repos[strings.ToLower(r)] = true
	}
	s.installations[in.ID] = in
	return in
}

// InstallationOf is the installation holding owner/repo, or nil. Lock held.
func (s *Server) InstallationOf(owner, repo string) *Installation {
	key := strings.ToLower(owner + "/" + repo)
	for _, in := range s.installations {
		if in.Repos[key] {
			return in
		}
	}
	return nil
}

// registerInstallations registers the endpoints of the App's
// installations: the one holding a repository, their access tokens, their
// list and each one's repositories.
func (s *Server) registerInstallations() {
	s.handlers["GET /repos/{owner}/{repo}/installation"] = s.getRepoInstallation
	s.handlers["POST /app/installations/{installation_id}/access_tokens"] = s.createAccessToken
	s.handlers["GET /app/installations"] = s.listInstallations
	s.handlers["GET /installation/repositories"] = s.installationRepos
}

func (s *Server) getRepoInstallation(r *Request) Reply {
	in := s.InstallationOf(r.Params["owner"], r.Params["repo"])
	if in == nil {
		return Error(404, "Not Found")
	}
	ex, err := s.Desc.Example("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	ex["id"] = in.ID
	ex["app_id"] = s.app.ID
	ex["app_slug"] = s.app.Slug
	if acc, ok := ex["account"].(map[string]any); ok {
		ex["account"] = s.userJSON(acc, in.Account)
	}
	ex["access_tokens_url"] = fmt.Sprintf("%s%s/app/installations/%d/access_tokens", s.URL, APIPrefix, in.ID)
	return JSON(200, ex)
}

func (s *Server) createAccessToken(r *Request) Reply {
	id, err := strconv.ParseInt(r.Params["installation_id"], 10, 64)
	in := s.installations[id]
	if err != nil || in == nil {
		return Error(404, "Not Found")
	}
	ex, err := s.Desc.Example("POST", r.Template, 201)
	if err != nil {
		return Error(500, err.Error())
	}
	tok := s.mintToken("ghs_")
	s.tokens[tok] = Identity{Kind: "installation", Login: s.app.Slug + "[bot]", Installation: in.ID}
	in.TokensIssued++
	ex["token"] = tok
	ex["expires_at"] = ts(s.Now().Add(time.Hour))
	delete(ex, "repositories")
	return JSON(201, ex)
}

// installationRepos lists the repositories of the calling installation.
func (s *Server) installationRepos(r *Request) Reply {
	in := s.installations[r.Auth.Installation]
	if r.Auth.Kind != "installation" || in == nil {
		return Error(403, "only installations list their repositories")
	}
	ex, err := s.Desc.Example("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	tmpl := map[string]any{}
	if rs, ok := ex["repositories"].([]any); ok && len(rs) > 0 {
		tmpl, _ = rs[0].(map[string]any)
	}
	var names []string
	for n := range in.Repos {
		names = append(names, n)
	}
	sort.Strings(names)
	repos := []any{}
	for _, n := range names {
		if rp, ok := s.repos[n]; ok {
			repos = append(repos, s.repoJSON(tmpl, rp))
		}
	}
	return JSON(200, map[string]any{"total_count": len(repos), "repositories": repos})
}

// listInstallations lists the App's installations.
func (s *Server) listInstallations(r *Request) Reply {
	ex, err := s.Desc.ExampleList("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	tmpl := map[string]any{}
	if len(ex) > 0 {
		tmpl, _ = ex[0].(map[string]any)
	}
	ids := make([]int64, 0, len(s.installations))
	for id := range s.installations {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := []any{}
	for _, id := range page(r, ids) {
		in := s.installations[id]
		o := clone(tmpl)
		o["id"] = in.ID
		o["app_id"] = s.app.ID
		o["app_slug"] = s.app.Slug
		if acc, ok := o["account"].(map[string]any); ok {
			o["account"] = enterpriseFields(s.userJSON(acc, in.Account), in.Account)
		}
		o["access_tokens_url"] = fmt.Sprintf("%s%s/app/installations/%d/access_tokens", s.URL, APIPrefix, in.ID)
		out = append(out, o)
	}
	return JSON(200, out)
}

// enterpriseFields adds to an installation list's account the fields of an
// enterprise: the description of GET /app/installations asks the account
// to be a user and an enterprise at once (allOf), and its own example,
// a user, would not pass.
func enterpriseFields(acc map[string]any, login string) map[string]any {
	for k, v := range map[string]any{"name": login, "slug": login, "created_at": "2019-01-26T19:01:12Z", "updated_at": "2019-01-26T19:14:43Z"} {
		if _, ok := acc[k]; !ok {
			acc[k] = v
		}
	}
	return acc
}
