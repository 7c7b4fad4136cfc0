// Package github is the GitHub forge driver (Forge, a forge.Driver): what
// redfix does on GitHub, said in pkg/forge's words, so that the client
// library's types never leave this package and its own. Below it: clients
// authenticated with a plain token or as a GitHub App installation (looked
// up per repository), on github.com or GitHub Enterprise Server (a
// configured API base URL), with retries of what GitHub asks to be
// retried, and the credentials git needs for HTTPS clones and pushes,
// given per command and never written to disk. Its subpackages are the
// events in (webhook, event, deliveries), the reports of its CI
// (runreport) and the test GitHub (ghtest).
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gogithub "github.com/google/go-github/v62/github"
	"go.uber.org/zap"
)

// PublicAPI is GitHub's own API.
const PublicAPI = "https://api.github.com/"

// Config is how to reach GitHub and as whom.
type Config struct {
	// APIURL is the REST API's base URL; empty means PublicAPI. For GitHub
	// Enterprise Server, its https://HOST/api/v3/.
	APIURL string
	// Token is a plain token (a personal access token or any token GitHub
	// accepts); used when AppID is 0.
	Token string
	// AppID and PrivateKeyFile (or PrivateKey) authenticate as a GitHub
	// App; each repository's installation is looked up.
	AppID          int64
	PrivateKeyFile string
	PrivateKey     []byte

	// Transport is the base transport; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Retry tunes retries; its Base is set to Transport.
	Retry Retry
	// Timeout bounds each API call; 0 means 60 s.
	Timeout time.Duration
	Log     *zap.Logger
}

// Enabled reports whether the configuration names credentials.
func (c Config) Enabled() bool { return c.Token != "" || c.AppID != 0 }

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	if c.AppID != 0 && c.PrivateKeyFile == "" && len(c.PrivateKey) == 0 {
		return errors.New("github: an app id needs a private key file")
	}
	if c.AppID == 0 && (c.PrivateKeyFile != "" || len(c.PrivateKey) > 0) {
		return errors.New("github: a private key needs the app id")
	}
	if c.APIURL != "" {
		u, err := url.Parse(c.APIURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("github: api url %q is not an http(s) URL", c.APIURL)
		}
	}
	return nil
}

// Clients hands out one shared client per installation (or the one client
// of a plain token), so that they share rate limits and token refreshes.
type Clients struct {
	cfg     Config
	log     *zap.Logger
	http    http.RoundTripper // retrying transport under the auth
	appTr   *ghinstallation.AppsTransport
	app     *gogithub.Client // authenticated as the App (JWT)
	single  *Client          // the plain-token client
	mu      sync.Mutex
	byInst  map[int64]*Client
	byRepo  map[string]int64
	baseURL string // the API base, with a trailing slash
}

// New checks cfg and prepares the clients.
func New(cfg Config) (*Clients, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, errors.New("github: neither a token nor an app id is configured")
	}
	log := cfg.Log
	if log == nil {
		log = zap.NewNop()
	}
	retry := cfg.Retry
	retry.Base = cfg.Transport
	if retry.OnRetry == nil {
		retry.OnRetry = func(req *http.Request, status int, wait time.Duration) {
			log.Info("github asked to retry", zap.String("method", req.Method), zap.String("path", req.URL.Path), zap.Int("status", status), zap.Duration("wait", wait))
		}
	}
	c := &Clients{cfg: cfg, log: log, http: &retry, byInst: map[int64]*Client{}, byRepo: map[string]int64{}}
	probe, err := c.newGitHub(c.http)
	if err != nil {
		return nil, err
	}
	c.baseURL = probe.BaseURL.String()
	if cfg.AppID == 0 {
		gc, err := c.newGitHub(&tokenTransport{token: cfg.Token, base: c.http})
		if err != nil {
			return nil, err
		}
		c.single = &Client{Client: gc, token: func(context.Context) (string, error) { return cfg.Token, nil }}
		return c, nil
	}
	key := cfg.PrivateKey
	if len(key) == 0 {
		key, err = os.ReadFile(cfg.PrivateKeyFile)
		if err != nil {
			return nil, fmt.Errorf("github: read private key: %w", err)
		}
	}
	c.appTr, err = ghinstallation.NewAppsTransport(c.http, cfg.AppID, key)
	if err != nil {
		return nil, fmt.Errorf("github: private key: %w", err)
	}
	c.appTr.BaseURL = strings.TrimRight(c.baseURL, "/")
	if c.app, err = c.newGitHub(c.appTr); err != nil {
		return nil, err
	}
	return c, nil
}

// newGitHub makes a go-github client on rt for the configured API.
func (c *Clients) newGitHub(rt http.RoundTripper) (*gogithub.Client, error) {
	timeout := c.cfg.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	gc := gogithub.NewClient(&http.Client{Transport: rt, Timeout: timeout})
	gc.UserAgent = "redfix"
	api := strings.TrimSpace(c.cfg.APIURL)
	if api == "" || strings.TrimRight(api, "/") == strings.TrimRight(PublicAPI, "/") {
		return gc, nil
	}
	gc, err := gc.WithEnterpriseURLs(api, api)
	if err != nil {
		return nil, fmt.Errorf("github: api url %q: %w", api, err)
	}
	return gc, nil
}

// APIURL is the API base URL the clients use (with a trailing slash).
func (c *Clients) APIURL() string { return c.baseURL }

// ForRepo is the client for owner/repo: the plain-token client, or the
// client of the App installation that holds the repository.
func (c *Clients) ForRepo(ctx context.Context, owner, repo string) (*Client, error) {
	if c.single != nil {
		return c.single, nil
	}
	key := strings.ToLower(owner + "/" + repo)
	c.mu.Lock()
	id, ok := c.byRepo[key]
	c.mu.Unlock()
	if !ok {
		inst, _, err := c.app.Apps.FindRepositoryInstallation(ctx, owner, repo)
		if err != nil {
			return nil, fmt.Errorf("find the app's installation on %s/%s: %w", owner, repo, err)
		}
		id = inst.GetID()
		c.mu.Lock()
		c.byRepo[key] = id
		c.mu.Unlock()
	}
	return c.ForInstallation(id)
}

// ForInstallation is the shared client of one App installation.
func (c *Clients) ForInstallation(id int64) (*Client, error) {
	if c.appTr == nil {
		return nil, errors.New("github: installations need an app id and private key")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.byInst[id]; ok {
		return cl, nil
	}
	itr := ghinstallation.NewFromAppsTransport(c.appTr, id)
	itr.BaseURL = strings.TrimRight(c.baseURL, "/")
	gc, err := c.newGitHub(itr)
	if err != nil {
		return nil, err
	}
	cl := &Client{Client: gc, Installation: id, token: itr.Token}
	c.byInst[id] = cl
	return cl, nil
}

// App is the client authenticated as the App itself (nil with a plain
// token): installations, hook deliveries.
func (c *Clients) App() *gogithub.Client { return c.app }

// Client is a go-github client for one installation (or token).
type Client struct {
	*gogithub.Client
	// Installation is the App installation's id; 0 for a plain token.
	Installation int64
	token        func(ctx context.Context) (string, error)
}

// NewTokenClient is a client of a fixed token, for tests and tools.
func NewTokenClient(gc *gogithub.Client, token string) *Client {
	return &Client{Client: gc, token: func(context.Context) (string, error) { return token, nil }}
}

// Token is the current token (an installation token is refreshed before it
// expires). Give it only to git, through GitEnv.
func (c *Client) Token(ctx context.Context) (string, error) { return c.token(ctx) }

// tokenTransport adds a plain token to each request.
type tokenTransport struct {
	token string
	base  http.RoundTripper
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.base.RoundTrip(r)
}
