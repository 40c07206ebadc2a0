//go:build !linux

package background

import (
	"context"
	"errors"
)

// Request is what run__start asks for.
type Request struct {
	Thread  string
	Hops    int
	Command string
	Spec    []byte
	// MaxRunning and KeepOutput, when said, are the agent's settings now
	// in place of the Manager's.
	MaxRunning int
	KeepOutput int64
}

// ErrTooMany is the refusal of a start past MaxRunning.
var ErrTooMany = errors.New("too many background commands running")

// errLinux is the refusal of a background command where there is no
// supervisor: each needs Linux's child subreaper and process groups.
var errLinux = errors.New("background commands run on Linux alone (a supervisor of each needs its child subreaper)")

// Start is refused off Linux.
func (m *Manager) Start(context.Context, Request) (Info, error) { return Info{}, errLinux }

// Stop is refused off Linux.
func (m *Manager) Stop(context.Context, string) (Info, error) { return Info{}, errLinux }

// Supervise answers 2 off Linux: nothing is supervised there.
func Supervise([]string, Builder) int { return 2 }
