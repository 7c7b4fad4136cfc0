package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/tools/txtar"
)

func TestCorpus(t *testing.T) {
	data, err := os.ReadFile("testdata/corpus.txtar")
	if err != nil {
		t.Fatal(err)
	}
	r := New()
	var pos, neg int
	for _, f := range txtar.Parse(data).Files {
		text := string(f.Data)
		switch {
		case strings.HasPrefix(f.Name, "positive/"):
			pos++
			first, body, _ := strings.Cut(text, "\n")
			secret := strings.TrimPrefix(first, "secret: ")
			if !strings.Contains(body, secret) {
				t.Fatalf("%s: the secret is not in the text", f.Name)
			}
			got := r.String(body)
			if strings.Contains(got, secret) || !strings.Contains(got, Mark) {
				t.Errorf("%s: not redacted:\n%s", f.Name, got)
			}
		case strings.HasPrefix(f.Name, "negative/"):
			neg++
			if got := r.String(text); got != text {
				t.Errorf("%s: ordinary text changed:\n%s", f.Name, got)
			}
		default:
			t.Fatalf("unexpected file %s", f.Name)
		}
	}
	if pos < 20 || neg < 5 {
		t.Fatalf("corpus too small: %d positives, %d negatives", pos, neg)
	}
}

func TestOwnValues(t *testing.T) {
	r := New("tok-ingest-1234", "", "abc", "whsec-very-secret")
	in := "posted with tok-ingest-1234; header Basic " + "dG9rLWluZ2VzdC0xMjM0" + " and whsec-very-secret; abc stays"
	got := r.String(in)
	for _, s := range []string{"tok-ingest-1234", "dG9rLWluZ2VzdC0xMjM0", "whsec-very-secret"} {
		if strings.Contains(got, s) {
			t.Errorf("%s survived: %s", s, got)
		}
	}
	if !strings.Contains(got, "abc stays") {
		t.Errorf("a value too short to redact safely erased text: %s", got)
	}
	// Values leaves pattern-shaped text alone (a patch must still apply).
	patch := "+key := \"AKIAQ3EXAMPLEFAKE7ZK\" // tok-ingest-1234"
	if got := r.Values(patch); !strings.Contains(got, "AKIAQ3EXAMPLEFAKE7ZK") || strings.Contains(got, "tok-ingest-1234") {
		t.Errorf("Values: %s", got)
	}
	var nilR *Redactor
	if nilR.String(in) != in || string(nilR.JSON([]byte(`{"a":"tok-ingest-1234"}`))) != `{"a":"tok-ingest-1234"}` {
		t.Error("a nil Redactor changed text")
	}
}

func TestJSONAndValue(t *testing.T) {
	r := New("sk-own-secret-value")
	type failure struct {
		Message string
		Output  []string
		N       int
	}
	in := failure{Message: "dial with sk-own-secret-value", Output: []string{"AKIAQ3EXAMPLEFAKE7ZK", "fine"}, N: 3}
	out, err := Value(r, in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.Message, "sk-own") || out.Output[0] != Mark || out.Output[1] != "fine" || out.N != 3 {
		t.Fatalf("Value: %+v", out)
	}
	if got := string(r.JSON([]byte("not json sk-own-secret-value"))); strings.Contains(got, "sk-own") {
		t.Fatalf("non-JSON text not redacted: %s", got)
	}
}

type stringer struct{}

func (stringer) String() string { return "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5" }

func TestCoreRedactsMessagesAndFields(t *testing.T) {
	r := New("own-secret-value")
	obs, logs := observer.New(zapcore.DebugLevel)
	log := zap.New(Core(obs, r)).With(zap.String("repo", "https://bot:own-secret-value@git.example/x"))
	log.Info("read own-secret-value from the environment",
		zap.String("plain", "own-secret-value"),
		zap.ByteString("bytes", []byte("AKIAQ3EXAMPLEFAKE7ZK")),
		zap.Error(errors.New("auth own-secret-value refused")),
		zap.Stringer("stringer", stringer{}),
		zap.Any("map", map[string]any{"nested": []string{"own-secret-value"}}),
		zap.Strings("list", []string{"x", "own-secret-value"}),
		zap.Int("n", 7),
	)
	var buf bytes.Buffer
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	for _, e := range logs.All() {
		b, err := enc.EncodeEntry(e.Entry, e.Context)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b.Bytes())
	}
	out := buf.String()
	for _, s := range []string{"own-secret-value", "AKIAQ3EXAMPLEFAKE7ZK", "ghp_aB3dE5"} {
		if strings.Contains(out, s) {
			t.Errorf("%s reached the log:\n%s", s, out)
		}
	}
	if !strings.Contains(out, `"n":7`) || !strings.Contains(out, Mark) {
		t.Errorf("the log lost its other fields:\n%s", out)
	}
}

func TestJSONLinesStayJSON(t *testing.T) {
	r := New("own-secret-value")
	in := `{"step":1,"observation":"fine"}
{"step":2,"observation":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN own-secret-value","z":"end"}
`
	out := string(r.JSONLines([]byte(in)))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || lines[0] != `{"step":1,"observation":"fine"}` {
		t.Fatalf("lines: %q", lines)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &v); err != nil {
		t.Fatalf("line 2 is no longer JSON: %v: %s", err, lines[1])
	}
	if strings.Contains(out, "MIIEvQIBADAN") || strings.Contains(out, "own-secret") || v["z"] != "end" {
		t.Fatalf("redacted trajectory: %s", out)
	}
}
