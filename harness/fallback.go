package harness

import (
	"errors"
	"slices"

	"github.com/lnk-dev/link/model"
)

// modelFailed is a model's failure to answer a round, past its
// provider's retries: unreachable, overloaded, refused, or no provider
// for it; streamed says some of its answer reached the caller first.
type modelFailed struct {
	err      error
	streamed bool
}

func (m modelFailed) Error() string { return m.err.Error() }
func (m modelFailed) Unwrap() error { return m.err }

// fallsBack says whether the round goes to the next model: not once the
// caller was streamed part of this one's answer, and not for a prompt
// too long, which is the window's to mend, not another model's.
func (m modelFailed) fallsBack() bool {
	return !m.streamed && !errors.Is(m.err, model.ErrPromptTooLong)
}

// models are the models a round asks, in order: first, the
// conversation's, then the settings' fallbacks (aliases resolved), each
// once.
func (t *turn) models(first string) []string {
	names := []string{first}
	for _, f := range t.c.settings.Fallbacks {
		if f = t.c.settings.Alias(f); f != "" && !slices.Contains(names, f) {
			names = append(names, f)
		}
	}
	return names
}
