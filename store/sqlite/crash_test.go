package sqlite_test

import (
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/sqlite"
	"github.com/lnk-dev/link/store/storetest"
)

// openIn opens dir's events.sqlite, failing t if it can't.
func openIn(t *testing.T) func(dir string) store.Conversations {
	return func(dir string) store.Conversations {
		d, err := sqlite.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
}

// TestCrash kills a writer mid-transaction many times over: every event
// it was told was written is there once, as written, and the next append
// works (storetest.Crash).
func TestCrash(t *testing.T) {
	storetest.Crash(t, openIn(t))
}

// TestContend: two processes take turns under the lease, one turn at a
// time, and a lease whose holder was killed is taken over once expired
// (storetest.Contend).
func TestContend(t *testing.T) {
	storetest.Contend(t, openIn(t))
}
