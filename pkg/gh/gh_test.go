package gh_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/gh"
	"github.com/redfix/redfix/pkg/gh/ghtest"
)

// sleeps records the waits a client asked for instead of taking them.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// sampleRepo makes a small local repository with one commit.
func sampleRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, nil, "git", "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, nil, "git", "add", "-A")
	run(t, dir, nil, "git", "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first")
	return dir
}

func run(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, env, args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0"}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func tokenClients(t *testing.T, srv *ghtest.Server, sl *sleeps) *gh.Clients {
	t.Helper()
	srv.AddToken("ghp_secret", "octo")
	cfg := gh.Config{APIURL: srv.APIURL(), Token: "ghp_secret"}
	if sl != nil {
		cfg.Retry.Sleep = sl.sleep
	}
	c, err := gh.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTokenClientOnEnterpriseBaseURL(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	c := tokenClients(t, srv, nil)
	if c.APIURL() != srv.APIURL() {
		t.Fatalf("api url %q, want %q", c.APIURL(), srv.APIURL())
	}
	cl, err := c.ForRepo(context.Background(), "acme", "widgets")
	if err != nil {
		t.Fatal(err)
	}
	repo, _, err := cl.Repositories.Get(context.Background(), "acme", "widgets")
	if err != nil {
		t.Fatal(err)
	}
	if repo.GetDefaultBranch() != "main" || repo.GetCloneURL() != srv.CloneURL("acme", "widgets") {
		t.Fatalf("repository %s: default branch %q, clone url %q", repo.GetFullName(), repo.GetDefaultBranch(), repo.GetCloneURL())
	}
	// A wrong token is refused.
	bad, err := gh.New(gh.Config{APIURL: srv.APIURL(), Token: "nope"})
	if err != nil {
		t.Fatal(err)
	}
	bc, _ := bad.ForRepo(context.Background(), "acme", "widgets")
	if _, resp, err := bc.Repositories.Get(context.Background(), "acme", "widgets"); err == nil || resp.StatusCode != 401 {
		t.Fatalf("bad token: err %v", err)
	}
}

func TestAppInstallationClientsAreSharedPerInstallation(t *testing.T) {
	srv := ghtest.New(t)
	src := sampleRepo(t)
	srv.CreateRepo("acme", "widgets", src)
	srv.CreateRepo("acme", "gears", src)
	srv.CreateRepo("other", "tools", src)
	app := srv.NewApp("redfix-test")
	acme := srv.Install("acme", "acme/widgets", "acme/gears")
	other := srv.Install("other", "other/tools")

	c, err := gh.New(gh.Config{APIURL: srv.APIURL(), AppID: app.ID, PrivateKeyFile: app.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := c.ForRepo(ctx, "acme", "widgets")
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.ForRepo(ctx, "acme", "gears")
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.ForRepo(ctx, "other", "tools")
	if err != nil {
		t.Fatal(err)
	}
	if w != g {
		t.Error("two repositories of one installation got two clients")
	}
	if w == o || w.Installation != acme.ID || o.Installation != other.ID {
		t.Errorf("installations: widgets %d, tools %d; want %d and %d", w.Installation, o.Installation, acme.ID, other.ID)
	}
	for _, cl := range []*gh.Client{w, g, w} {
		if _, _, err := cl.Repositories.Get(ctx, "acme", "widgets"); err != nil {
			t.Fatal(err)
		}
	}
	// An installation's token does not open another installation's
	// repository.
	if _, resp, err := o.Repositories.Get(ctx, "acme", "widgets"); err == nil || resp.StatusCode != 404 {
		t.Errorf("other installation reading acme/widgets: %v", err)
	}
	srv.Lock()
	issued := acme.TokensIssued
	srv.Unlock()
	if issued != 1 {
		t.Errorf("installation tokens minted: %d, want 1 (shared, cached)", issued)
	}
	// A repository where the App is not installed.
	srv.CreateRepo("nobody", "x", src)
	if _, err := c.ForRepo(ctx, "nobody", "x"); err == nil {
		t.Error("a repository without the App got a client")
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	sl := &sleeps{}
	c := tokenClients(t, srv, sl)
	srv.Inject("GET", "/repos/{owner}/{repo}", 2, ghtest.Fault{Status: 502})
	cl, _ := c.ForRepo(context.Background(), "acme", "widgets")
	if _, _, err := cl.Repositories.Get(context.Background(), "acme", "widgets"); err != nil {
		t.Fatal(err)
	}
	calls := srv.CallsTo("GET", "/repos/{owner}/{repo}")
	if len(calls) != 3 || calls[0].Status != 502 || calls[1].Status != 502 || calls[2].Status != 200 {
		t.Fatalf("calls %+v, want 502, 502, 200", calls)
	}
	if got := sl.got(); len(got) != 2 || got[0] != time.Second || got[1] != 2*time.Second {
		t.Errorf("waits %v, want [1s 2s]", got)
	}
}

func TestSecondaryRateLimitWaitsRetryAfter(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	sl := &sleeps{}
	c := tokenClients(t, srv, sl)
	srv.Inject("GET", "/repos/{owner}/{repo}", 1, ghtest.SecondaryRateLimit(7*time.Second))
	cl, _ := c.ForRepo(context.Background(), "acme", "widgets")
	if _, _, err := cl.Repositories.Get(context.Background(), "acme", "widgets"); err != nil {
		t.Fatal(err)
	}
	if got := sl.got(); len(got) != 1 || got[0] != 7*time.Second {
		t.Errorf("waits %v, want [7s]", got)
	}
	if calls := srv.CallsTo("GET", "/repos/{owner}/{repo}"); len(calls) != 2 || calls[0].Status != 403 || calls[1].Status != 200 {
		t.Errorf("calls %+v", calls)
	}
}

func TestRetriesAreBoundedAndStopWithTheContext(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	sl := &sleeps{}
	c := tokenClients(t, srv, sl)
	srv.Inject("GET", "/repos/{owner}/{repo}", 5, ghtest.Fault{Status: 503})
	cl, _ := c.ForRepo(context.Background(), "acme", "widgets")
	_, resp, err := cl.Repositories.Get(context.Background(), "acme", "widgets")
	if err == nil || resp.StatusCode != 503 {
		t.Fatalf("after 5 faults: %v", err)
	}
	if n := len(srv.CallsTo("GET", "/repos/{owner}/{repo}")); n != 5 {
		t.Errorf("%d calls, want 5 (the bound)", n)
	}

	// A wait longer than MaxWait is not taken: the rate limit is returned.
	srv.Inject("GET", "/repos/{owner}/{repo}", 1, ghtest.SecondaryRateLimit(time.Hour))
	before := len(sl.got())
	if _, resp, err = cl.Repositories.Get(context.Background(), "acme", "widgets"); err == nil || resp.StatusCode != 403 {
		t.Fatalf("hour-long retry-after: %v", err)
	}
	if len(sl.got()) != before {
		t.Error("waited for an hour-long Retry-After")
	}

	// Cancelled while waiting: the call ends with the context's error.
	c2, err := gh.New(gh.Config{APIURL: srv.APIURL(), Token: "ghp_secret", Retry: gh.Retry{Sleep: gh.Sleep, Backoff: time.Hour, MaxWait: 2 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	cl2, _ := c2.ForRepo(context.Background(), "acme", "widgets")
	srv.Inject("GET", "/repos/{owner}/{repo}", 1, ghtest.Fault{Status: 502})
	seen := len(srv.CallsTo("GET", "/repos/{owner}/{repo}"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the 502 was answered: the client is then waiting.
		deadline := time.Now().Add(30 * time.Second)
		for len(srv.CallsTo("GET", "/repos/{owner}/{repo}")) == seen && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	if _, _, err := cl2.Repositories.Get(ctx, "acme", "widgets"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

func TestRetryAfterRateLimitReset(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	var waited []time.Duration
	rt := &gh.Retry{
		Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			if len(waited) == 0 {
				h.Set("X-Ratelimit-Remaining", "0")
				h.Set("X-Ratelimit-Reset", "1700000030")
				return &http.Response{StatusCode: 403, Header: h, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
		}),
		Now:   func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error { waited = append(waited, d); return nil },
	}
	req, _ := http.NewRequest("GET", "http://x/", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if len(waited) != 1 || waited[0] != 31*time.Second {
		t.Errorf("waited %v, want [31s] (reset + 1 s)", waited)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestGitAuthenticatesPerCommandOnly(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	c := tokenClients(t, srv, nil)
	cl, _ := c.ForRepo(context.Background(), "acme", "widgets")
	env, err := cl.GitEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if out, err := runErr(dir, nil, "git", "clone", "-q", srv.CloneURL("acme", "widgets"), "anon"); err == nil {
		t.Fatalf("clone without the token worked: %s", out)
	}
	run(t, dir, env, "git", "clone", "-q", srv.CloneURL("acme", "widgets"), "w")
	cfg, err := os.ReadFile(filepath.Join(dir, "w", ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "ghp_secret") || strings.Contains(string(cfg), "extraHeader") {
		t.Errorf(".git/config holds the credentials:\n%s", cfg)
	}
	if got := srv.GitStatsOf("acme", "widgets"); got.Denied == 0 || got.UploadPacks == 0 {
		t.Errorf("git stats %+v", got)
	}
}

func TestParseRepo(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/acme/widgets.git":          "acme/widgets",
		"https://github.com/acme/widgets":              "acme/widgets",
		"https://ghe.example/acme/widgets.git":         "acme/widgets",
		"git@github.com:acme/widgets.git":              "acme/widgets",
		"http://127.0.0.1:4000/acme/widgets.git":       "acme/widgets",
		"https://ghe.example/prefix/acme/widgets.git/": "acme/widgets",
		"ssh://git@github.com/acme/widgets.git":        "acme/widgets",
	} {
		o, n, err := gh.ParseRepo(in)
		if err != nil || o+"/"+n != want {
			t.Errorf("ParseRepo(%q) = %q/%q, %v; want %s", in, o, n, err, want)
		}
	}
	for _, bad := range []string{"", "/tmp/repo", "https://github.com/acme"} {
		if _, _, err := gh.ParseRepo(bad); err == nil {
			t.Errorf("ParseRepo(%q) accepted", bad)
		}
	}
}

func TestTokenGoesOnlyToTheConfiguredHost(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	c := tokenClients(t, srv, nil)
	ctx := context.Background()
	env, err := c.GitEnvFor(ctx, srv.CloneURL("acme", "widgets"))
	if err != nil || len(env) == 0 {
		t.Fatalf("the configured host's repository got no credentials: %v %v", env, err)
	}
	for _, other := range []string{"https://git.example/acme/widgets.git", "/tmp/repo", "file:///tmp/repo", "git@github.com:acme/widgets.git"} {
		if env, err := c.GitEnvFor(ctx, other); err != nil || env != nil {
			t.Errorf("%s got credentials %v (%v)", other, env, err)
		}
	}
	pub, err := gh.New(gh.Config{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if !pub.Serves("https://github.com/acme/widgets.git") || pub.Serves("http://github.com/acme/widgets.git") || pub.Serves("https://github.example/acme/widgets.git") {
		t.Error("public GitHub: github.com over https only")
	}
}

func TestWhatIsNotRetried(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for name, c := range map[string]struct {
		status int
		header map[string]string
		want   []time.Duration
	}{
		"plain 403 (a permission)": {status: 403, want: nil},
		"404":                      {status: 404, want: nil},
		"501":                      {status: 501, want: nil},
		"429 with an HTTP date":    {status: 429, header: map[string]string{"Retry-After": now.Add(9 * time.Second).UTC().Format(http.TimeFormat)}, want: []time.Duration{9 * time.Second}},
		"403 primary limit, reset": {status: 403, header: map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "1700000004"}, want: []time.Duration{5 * time.Second}},
		"403 with requests left":   {status: 403, header: map[string]string{"X-Ratelimit-Remaining": "12", "X-Ratelimit-Reset": "1700000004"}, want: nil},
	} {
		t.Run(name, func(t *testing.T) {
			var waited []time.Duration
			calls := 0
			rt := &gh.Retry{
				Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					calls++
					h := http.Header{}
					if calls == 1 {
						for k, v := range c.header {
							h.Set(k, v)
						}
						return &http.Response{StatusCode: c.status, Header: h, Body: http.NoBody, Request: r}, nil
					}
					return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
				}),
				Now:   func() time.Time { return now },
				Sleep: func(_ context.Context, d time.Duration) error { waited = append(waited, d); return nil },
			}
			req, _ := http.NewRequest("POST", "http://x/", strings.NewReader(`{"a":1}`))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(waited) != fmt.Sprint(c.want) {
				t.Errorf("waited %v, want %v", waited, c.want)
			}
			if (c.want == nil) != (resp.StatusCode == c.status) {
				t.Errorf("final status %d", resp.StatusCode)
			}
		})
	}
}
