package publish

import (
	"context"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/gitrepo"
)

// requestReviews asks the blame commit's author (when the forge knows
// them), the failing tests' code owners and the reviewers the repository's
// .redfix.yaml names for a review, on a forge that has reviews. Which of
// them the forge takes, and how it asks teams, is its driver's; a reviewer
// it refuses is logged.
func (g *Forge) requestReviews(ctx context.Context, r *forgeRepo, created forge.ChangeRequest, pr PullRequest, mirror gitrepo.Repo, tests map[string]testFile, log *zap.Logger) {
	rv, ok := r.cr.(Reviews)
	if !ok {
		return
	}
	var reviewers []string
	add := func(v string) {
		for _, x := range reviewers {
			if strings.EqualFold(x, v) {
				return
			}
		}
		reviewers = append(reviewers, v)
	}
	if blame := pr.Task.Bisection.Blame; blame != "" {
		u, err := rv.CommitAuthor(ctx, r.id, blame)
		switch {
		case err != nil:
			log.Warn("look up the blame commit's author", zap.Error(err))
		case u.Login != "" && !u.Bot:
			add(u.Login)
		default:
			log.Info("the blame commit's author is no user of the forge: no review requested from them")
		}
	}
	if co, ok := codeOwners(ctx, mirror, pr.Task.Commit, rv.CodeOwnersFiles()); ok {
		for _, tf := range tests {
			for _, o := range co.Owners(tf.path) {
				o = strings.TrimPrefix(o, "@")
				if strings.Contains(o, "@") || o == "" {
					continue // an e-mail address: no review can be asked of it
				}
				add(o)
			}
		}
	}
	for _, p := range pr.Reviewers { // the repository's own (.redfix.yaml)
		add(p)
	}
	var asked []string
	for _, u := range reviewers {
		if !strings.EqualFold(u, created.Author.Login) {
			asked = append(asked, u)
		}
	}
	if len(asked) == 0 {
		return
	}
	if err := rv.RequestReviews(ctx, r.id, created.Number, asked); err != nil {
		log.Info("reviews not all requested", zap.Strings("reviewers", asked), zap.Error(err))
		return
	}
	log.Info("reviews requested", zap.Strings("reviewers", asked))
}

// codeOwners reads the repository's code owners at commit, from the first
// of files (where its forge looks for them) that is there.
func codeOwners(ctx context.Context, repo gitrepo.Repo, commit string, files []string) (CodeOwners, bool) {
	for _, p := range files {
		if data, err := repo.Git(ctx, "show", commit+":"+p); err == nil {
			return ParseCodeOwners(data), true
		}
	}
	return CodeOwners{}, false
}
