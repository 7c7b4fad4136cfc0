package triage

import (
	"testing"

	"github.com/redfix/redfix/pkg/repoconfig"
)

func TestRepoPolicyNarrowsTriage(t *testing.T) {
	t.Parallel()
	off := &repoconfig.Policy{Enabled: false, Source: ".redfix.yaml at abc123"}
	reason := optedOutByFile(off)
	if reason != "repository opted out in its .redfix.yaml at abc123 (enabled: false)" || ReasonClass(reason) != ReasonOptedOut {
		t.Errorf("reason %q (class %s); want an opt-out counted as %s", reason, ReasonClass(reason), ReasonOptedOut)
	}
	if r := optedOutByFile(&repoconfig.Policy{Enabled: true}); r != "" {
		t.Errorf("an enabled repository dropped: %q", r)
	}
	if r := optedOutByFile(nil); r != "" {
		t.Errorf("no policy dropped: %q", r)
	}

	tr := &Triage{cfg: Config{DailyJobs: 10, DailyJobsByRepo: map[string]int{"https://github.com/acme/small": 3}}}
	for _, c := range []struct {
		repo string
		pol  *repoconfig.Policy
		want int
	}{
		{"https://github.com/acme/shop", nil, 10},
		{"https://github.com/acme/shop", &repoconfig.Policy{RepairsPerDay: 4}, 4},
		{"https://github.com/acme/shop", &repoconfig.Policy{RepairsPerDay: 40}, 10},
		{"https://github.com/acme/small", &repoconfig.Policy{RepairsPerDay: 5}, 3},
		{"https://github.com/acme/shop", &repoconfig.Policy{}, 10},
	} {
		if got := tr.dailyLimitWith(c.repo, c.pol); got != c.want {
			t.Errorf("dailyLimitWith(%s, %+v) = %d, want %d", c.repo, c.pol, got, c.want)
		}
	}
	unlimited := &Triage{}
	if got := unlimited.dailyLimitWith("https://github.com/acme/shop", &repoconfig.Policy{RepairsPerDay: 2}); got != 2 {
		t.Errorf("a repository's limit where central has none: %d, want 2", got)
	}
}
