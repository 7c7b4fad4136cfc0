package repoconfig

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/repourl"
)

// Mirrors gives redfix's own mirror of a remote repository, holding commit
// (workspace.Mirrors): nothing of the repository ever ran in it.
type Mirrors interface {
	Mirror(ctx context.Context, src, commit string) (gitrepo.Repo, error)
}

// Reporter tells a repository's team that its file is invalid, where they
// see it (a check run on the commit).
type Reporter interface {
	ReportInvalid(ctx context.Context, repo, commit string, problem error) error
}

// Loader reads a repository's policy at a commit.
type Loader struct {
	Mirrors Mirrors
	// Central is the central configuration's ceiling for a repository.
	Central func(repo string) Central
	// Report, when set, is told of invalid files.
	Report Reporter
	Log    *zap.Logger
}

// InvalidError is a file that could not be used; the central configuration
// applies meanwhile.
type InvalidError struct {
	Repo, Commit string
	Err          error
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s at %s is invalid: %v", FileName, e.Commit, e.Err)
}

func (e *InvalidError) Unwrap() error { return e.Err }

// Load is repo's policy at commit: the central configuration narrowed by
// the file committed there, or the central configuration alone when there
// is no file, or when it is invalid (then reported, logged, and returned
// as an *InvalidError alongside the central policy). Any other error is
// the machinery failing (the mirror cannot be fetched).
func (l *Loader) Load(ctx context.Context, repo, commit string) (Policy, error) {
	central := l.Central(repo)
	log := l.Log
	if log == nil {
		log = zap.NewNop()
	}
	log = log.With(zap.String("repo", repo), zap.String("commit", commit))
	data, found, err := l.read(ctx, repo, commit)
	if err != nil && !errors.Is(err, gitrepo.ErrTooLarge) && !errors.Is(err, gitrepo.ErrNotAFile) {
		return FromCentral(central), fmt.Errorf("read %s of %s at %s: %w", FileName, repo, commit, err)
	}
	if !found {
		return FromCentral(central), nil
	}
	var f File
	if err == nil {
		f, err = Parse(data)
	}
	if err != nil {
		inv := &InvalidError{Repo: repo, Commit: commit, Err: err}
		log.Warn("the repository's file is invalid; the central configuration applies", zap.String("file", FileName), zap.Error(err))
		if l.Report != nil {
			if rerr := l.Report.ReportInvalid(ctx, repo, commit, err); rerr != nil {
				log.Warn("report the invalid file", zap.Error(rerr))
			}
		}
		return FromCentral(central), inv
	}
	p := Narrow(central, f, commit)
	for _, h := range p.Held {
		log.Info("a key of the repository's file would widen the central configuration; held to it", zap.String("file", FileName), zap.String("held", h))
	}
	return p, nil
}

// read reads the file from redfix's mirror of a remote repository, or
// from a local repository itself (redfix runs nothing in it).
func (l *Loader) read(ctx context.Context, repo, commit string) ([]byte, bool, error) {
	r := gitrepo.Repo{Dir: repo}
	if repourl.IsNetwork(repo) {
		if l.Mirrors == nil {
			return nil, false, errors.New("no mirrors to read a remote repository from")
		}
		m, err := l.Mirrors.Mirror(ctx, repo, commit)
		if err != nil {
			return nil, false, err
		}
		r = m
	}
	return r.ReadFile(ctx, commit, FileName, MaxFileBytes)
}

// CheckName is the check run that tells a repository its file is invalid.
const CheckName = "redfix / " + FileName

// InvalidSummary is what the check run of an invalid file says, in
// Markdown: the problems as the parser found them (the file's own text, so
// fenced as code), and that the central configuration applies meanwhile.
func InvalidSummary(commit string, problem error) (title, summary string) {
	title = FileName + " is invalid: the central configuration applies"
	summary = "redfix could not use `" + FileName + "` at " + shortCommit(commit) + ":\n\n" +
		markdown.CodeBlock("text", problem.Error()) +
		"Until it is fixed, redfix goes on repairing this repository under its central configuration, " +
		"as if the file were not there. Every key is described in redfix's docs/redfix-yaml.md.\n"
	return title, summary
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
