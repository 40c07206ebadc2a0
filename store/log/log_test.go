package log_test

import (
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

func TestDriver(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Conversations { return log.Open(t.TempDir()) })
}
