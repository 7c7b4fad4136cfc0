package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestRunExitCodeAndOutput(t *testing.T) {
	res, err := Run(context.Background(), Cmd{Args: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.OK() {
		t.Fatalf("exit code %d, want 3", res.ExitCode)
	}
	if !strings.Contains(res.Output, "out") || !strings.Contains(res.Output, "err") {
		t.Fatalf("output %q lacks stdout or stderr", res.Output)
	}
}

func TestRunTimeoutKillsGroup(t *testing.T) {
	res, err := Run(context.Background(), Cmd{Args: []string{"sh", "-c", "sleep 30 & sleep 30"}, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.OK() {
		t.Fatalf("want a timeout, got %+v", res)
	}
}

func TestRunCancelledIsAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Cmd{Args: []string{"sleep", "5"}}); err == nil {
		t.Fatal("a cancelled run returned no error")
	}
}

func TestRunCapsOutputKeepingHeadAndTail(t *testing.T) {
	res, err := Run(context.Background(), Cmd{Args: []string{"sh", "-c", "echo FIRST; seq 1 100000; echo LAST"}, MaxOutput: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Output) > 1200 {
		t.Fatalf("output is %d bytes, cap was 1000", len(res.Output))
	}
	for _, want := range []string{"FIRST", "LAST", "omitted"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("capped output lacks %q", want)
		}
	}
}

func TestEnvDropsSecrets(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "secret")
	t.Setenv("OPENAI_API_KEY", "secret")
	res, err := Run(context.Background(), Cmd{Args: []string{"env"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Output, "secret") {
		t.Fatalf("credentials reached the command:\n%s", res.Output)
	}
}
