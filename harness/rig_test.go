package harness_test

import (
	"errors"
	"testing"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/store"
)

const testAgent = harnesstest.Agent

// rig is the harness's test rig, harnesstest.Rig, with this package's
// helpers as its methods.
type rig struct{ *harnesstest.Rig }

// newRig starts a rig; edit changes its config before the harness is
// made.
func newRig(t *testing.T, edit ...func(*harness.Config)) *rig {
	t.Helper()
	return &rig{harnesstest.New(t, edit...)}
}

// The rig's parts under this package's names.
type (
	exchange = harnesstest.Exchange
	note     = harnesstest.Note
	timers   = harnesstest.Timers
)

var (
	testDrivers  = harnesstest.Drivers
	newTestTools = harnesstest.NewTools
)

func isKind(k store.Kind) func(store.Event) bool {
	return func(e store.Event) bool { return e.Kind == k }
}

func count(events []store.Event, f func(store.Event) bool) int {
	n := 0
	for _, e := range events {
		if f(e) {
			n++
		}
	}
	return n
}

var errTest = errors.New("test")
