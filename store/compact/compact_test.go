package compact_test

import (
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/storetest"
)

// open gives a driver of an empty conversations folder, closed with tb.
func open(tb testing.TB) *compact.Driver {
	d := compact.Open(tb.TempDir())
	tb.Cleanup(func() { d.Close() })
	return d
}

func TestDriver(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Conversations { return open(t) })
}
