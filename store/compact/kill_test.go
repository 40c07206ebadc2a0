package compact_test

import (
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/storetest"
)

// TestKill kills a writer mid-append many times over, half the kills
// aimed at an append that folds the tail into a frame: every event it was
// told was written is there once, as written, and the next append works
// (storetest.Crashes).
func TestKill(t *testing.T) {
	storetest.Crashes{
		Open:      func(dir string) store.Conversations { return compact.Open(dir) },
		FoldEvery: compact.FoldEvents,
	}.Run(t)
}

// TestContend: two processes take turns under the lease, one turn at a
// time, and a lease whose holder was killed is taken over once expired
// (storetest.Contend).
func TestContend(t *testing.T) {
	storetest.Contend(t, func(dir string) store.Conversations { return compact.Open(dir) })
}
