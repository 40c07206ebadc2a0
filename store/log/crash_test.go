package log_test

import (
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// TestCrash kills a writer mid-append many times over: every event it
// was told was written is there once, as written, and the next append
// works (storetest.Crash).
func TestCrash(t *testing.T) {
	storetest.Crash(t, func(dir string) store.Conversations { return log.Open(dir) })
}

// TestContend: two processes take turns under the lease, one turn at a
// time, and a lease whose holder was killed is taken over once expired
// (storetest.Contend).
func TestContend(t *testing.T) {
	storetest.Contend(t, func(dir string) store.Conversations { return log.Open(dir) })
}
