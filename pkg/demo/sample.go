// Package demo builds the sample repositories that `bot demo` repairs: a
// small Go module, a small Python project, a TypeScript project tested with
// vitest and a JavaScript one tested with jest, each with real history in
// which one commit breaks a test through a real bug inside a larger change,
// followed by unrelated commits, and the CI report of its head.
package demo

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
)

// history holds each sample's commits, one txtar archive each (the
// archive's comment is the commit message), under history/<language>.
//
//go:embed history
var history embed.FS

// authors of the samples' commits, by commit number (1-based).
var authors = []string{
	"Ada Lovelace <ada@shop.example>",
	"Ada Lovelace <ada@shop.example>",
	"Grace Hopper <grace@shop.example>",
	"Linus Pauling <linus@shop.example>",
	"Grace Hopper <grace@shop.example>",
	"Ada Lovelace <ada@shop.example>",
}

// sample is one language's sample: where its history is, how a person
// runs its tests, and how its CI makes the report it posts.
type sample struct {
	lang string
	// packages are every package of the sample, as its language driver's
	// RunPackages takes them.
	packages []string
	// command is how a person runs the sample's tests.
	command string
	// ci runs the head's tests as the sample's CI does and returns the
	// report CI posts.
	ci func(ctx context.Context, dir string, tests Tests) ([]byte, error)
}

// samples are the samples, the default first.
var samples = []sample{
	{lang: "go", packages: []string{"./..."}, command: "go test ./...", ci: goCI},
	{lang: "python", packages: []string{"."}, command: "python3 -m pytest", ci: driverCI},
	{lang: "typescript", packages: []string{"."}, command: "npx vitest run", ci: driverCI},
	{lang: "javascript", packages: []string{"."}, command: "npx jest", ci: driverCI},
}

// Languages lists the samples' languages, the default first.
func Languages() []string {
	names := make([]string, len(samples))
	for i, s := range samples {
		names[i] = s.lang
	}
	return names
}

// ErrUnknownLanguage is returned for a language no sample is written in.
var ErrUnknownLanguage = errors.New("no sample in that language")

// lookup is the sample in lang ("" is the default).
func lookup(lang string) (sample, error) {
	if lang == "" {
		return samples[0], nil
	}
	for _, s := range samples {
		if s.lang == lang {
			return s, nil
		}
	}
	return sample{}, fmt.Errorf("sample repository %q: %w (choices: %s)", lang, ErrUnknownLanguage, strings.Join(Languages(), ", "))
}

// CheckLanguage says whether a sample is written in lang ("" is the
// default), with the choices when none is.
func CheckLanguage(lang string) error {
	_, err := lookup(lang)
	return err
}

// Drivers chooses a checkout's language driver as the bot chooses one for
// any repository (*lang.Drivers).
type Drivers interface {
	For(repo, dir string) (lang.Driver, error)
}

// Options choose the sample and what runs its tests.
type Options struct {
	// Lang is the sample's language, one of Languages(); "" is "go".
	Lang string
	// Drivers chooses the language driver of the sample once its history
	// is written, as the bot's configuration makes them. The Python, the
	// TypeScript and the JavaScript samples' CI runs their tests through
	// that driver (set up first: the Node samples install their locked
	// dependencies); the Go sample's CI
	// posts `go test -json` (its report format) and needs none. With
	// Drivers nil, Sample.Driver is nil.
	Drivers Drivers
}

// Sample is the built repository.
type Sample struct {
	Dir string
	// Lang is the sample's language.
	Lang    string
	Commits []string // oldest first
	// Good is the last commit at which every test passes (CI's last green);
	// Head is the failing branch head CI reports on.
	Good, Head string
	// Report is the report CI posts on Head: `go test -json ./...` for Go;
	// for the others, the language driver's run of the runner (pytest,
	// vitest, jest) written as JUnit XML, tests named by their canonical
	// ids (pytest's node ids; FILE::describe > title for Node).
	Report []byte
	// Driver is the language driver chosen for the sample (nil without
	// Options.Drivers); Packages are all its packages, as the driver's
	// RunPackages takes them; Command is how a person runs its tests.
	Driver   lang.Driver
	Packages []string
	Command  string
}

// Build writes the Go sample repository into dir (which must not exist or
// be empty) and runs its tests at the head, as CI would.
func Build(ctx context.Context, dir string) (Sample, error) {
	return BuildWith(ctx, dir, Options{})
}

// BuildWith writes the sample o chooses into dir (which must not exist or
// be empty) and runs its tests at the head, as CI would.
func BuildWith(ctx context.Context, dir string, o Options) (Sample, error) {
	sm, err := lookup(o.Lang)
	if err != nil {
		return Sample{}, err
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return Sample{}, fmt.Errorf("sample repository: %s is not empty", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Sample{}, fmt.Errorf("sample repository: %w", err)
	}
	s := Sample{Dir: dir, Lang: sm.lang, Packages: sm.packages, Command: sm.command}
	if s.Commits, err = writeHistory(ctx, dir, sm.lang); err != nil {
		return Sample{}, err
	}
	// CI was last green at the commit before the breaking one's parent:
	// bisection then has more than one candidate to search.
	s.Good = s.Commits[1]
	s.Head = s.Commits[len(s.Commits)-1]
	if o.Drivers != nil {
		if s.Driver, err = o.Drivers.For(dir, dir); err != nil {
			return Sample{}, fmt.Errorf("sample repository: %w", err)
		}
	}
	var tests Tests
	if s.Driver != nil {
		tests = s.Driver
	}
	if s.Report, err = sm.ci(ctx, dir, tests); err != nil {
		return Sample{}, fmt.Errorf("sample CI run: %w", err)
	}
	return s, nil
}

// writeHistory commits the sample's history in lang into a new repository
// at dir and returns its commits, oldest first.
func writeHistory(ctx context.Context, dir, lang string) ([]string, error) {
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("sample repository: %w", err)
	}
	root := path.Join("history", lang)
	names, err := history.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("sample repository %s: %w", lang, err)
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
	var commits []string
	when := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	for i, e := range names {
		data, err := history.ReadFile(path.Join(root, e.Name()))
		if err != nil {
			return nil, err
		}
		ar := txtar.Parse(data)
		for _, f := range ar.Files {
			p := filepath.Join(dir, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				return nil, err
			}
		}
		msg := strings.TrimSpace(string(ar.Comment))
		date := when.Add(time.Duration(i) * 26 * time.Hour).Format(time.RFC3339)
		if _, err := repo.Git(ctx, "add", "-A"); err != nil {
			return nil, err
		}
		if _, err := repo.Git(ctx, "commit", "-q", "--author", authors[i%len(authors)], "--date", date, "-m", msg); err != nil {
			return nil, fmt.Errorf("sample commit %s/%s: %w", lang, e.Name(), err)
		}
		sha, err := repo.Resolve(ctx, "HEAD")
		if err != nil {
			return nil, err
		}
		commits = append(commits, sha)
	}
	return commits, nil
}
