package harness

import (
	"github.com/lnk-dev/link/model"
)

// recompose makes the next round compose the system prompt again: a
// file it is made of changed (a note saved).
func (t *turn) recompose() { t.sys = nil }

// systemKey is what a composed system prompt depends on in a turn beside
// the agent's files: the model and the tools offered.
func systemKey(name string, tools []model.Tool) string {
	n := len(name)
	for _, tl := range tools {
		n += len(tl.Name) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, name...)
	for _, tl := range tools {
		b = append(b, 0)
		b = append(b, tl.Name...)
	}
	return string(b)
}
