package codeindex

import (
	"errors"

	"github.com/redfix/redfix/pkg/untrusted"
)

// MaxFileSize is the largest file indexed: a larger one (generated code, or
// a file a test wrote to exhaust the bot's memory) is left out.
const MaxFileSize = 2 << 20

// parse reads the file rel beneath the index's root, through no link, sized
// before it is read, and returns its declarations.
func (ix *Index) parse(rel string) ([]Symbol, error) {
	src, err := untrusted.ReadFile(ix.dir, rel, MaxFileSize)
	if errors.Is(err, untrusted.ErrTooLarge) || errors.Is(err, untrusted.ErrLink) || errors.Is(err, untrusted.ErrNotRegular) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ix.parser.Parse(rel, src), nil
}
