package gcs

import (
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/storetest"
)

// The one suite every driver passes, each test on a fake server of its
// own.
func TestDriver(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Conversations { return openDriver(t, newFake(t)) })
}
