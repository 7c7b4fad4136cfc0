package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/gitremote"
	"github.com/redfix/redfix/pkg/publish"
)

// TestPostReportOfARepositoryWithNoDeliveryIsRefused: a report of a
// repository whose fix no configured way could deliver (on no forge, under
// no git remote's prefix, or remote while fixes go to local paths only) is
// answered 422 with the reason, logged, and not stored: it is never
// triaged and repaired for nothing. A repository with a way is accepted.
func TestPostReportOfARepositoryWithNoDeliveryIsRefused(t *testing.T) {
	remotes, err := gitremote.New(gitremote.Remote{Prefix: "git://git.example/team/"})
	if err != nil {
		t.Fatal(err)
	}
	allow := mustAllow(t, "/r", "git://git.example/**", "https://git.example/**")
	for _, c := range []struct {
		name   string
		ways   publish.Ways
		repo   string
		code   int
		reason string
	}{
		{"on no forge", publish.Ways{Forges: forge.New(remotes), OnForges: true}, "https://git.example/team/app.git", 422, "under no configured git remote's prefix"},
		{"no forge at all", publish.Ways{Forges: forge.New(), OnForges: true}, "git://git.example/team/app", 422, "no configured forge serves git://git.example/team/app"},
		{"local only", publish.Ways{Forges: forge.New(remotes)}, "git://git.example/team/app", 422, "publish.mode local"},
		{"a git remote", publish.Ways{Forges: forge.New(remotes), OnForges: true}, "git://git.example/team/app.git", 202, ""},
		{"a local path", publish.Ways{Forges: forge.New()}, "/r", 202, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, in, logs, _ := setup(t, Options{Allow: allow, Deliveries: c.ways})
			code, out := post(t, srv.URL+"/api/v1/reports?"+url.Values{"repo": {c.repo}, "commit": {"abc"}}.Encode(), goodReport, nil)
			msg, _ := out["error"].(string)
			if code != c.code || !strings.Contains(msg, c.reason) {
				t.Fatalf("code %d, error %q; want %d naming %q", code, msg, c.code, c.reason)
			}
			if code != http.StatusAccepted {
				if len(in.subs) != 0 {
					t.Fatal("a refused report was stored")
				}
				if logs.FilterMessage("request failed").Len() != 1 || !strings.Contains(msg, "no way to deliver a fix") {
					t.Fatalf("want one log line for the refusal, saying why: %v", logs.All())
				}
			}
		})
	}
}
