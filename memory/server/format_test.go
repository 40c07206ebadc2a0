package server

import (
	"strings"
	"testing"

	"github.com/lnk-dev/link/memory"
)

// An answer from an index still behind says so, and what it couldn't
// read, rather than a bare "nothing matches".
func TestFormatBehind(t *testing.T) {
	got := formatSearch("wombat", memory.Found{Ranking: "full text (BM25)", Fresh: memory.Freshness{Pending: 300, Skipped: []string{"chats/gcs:1: no driver"}}})
	for _, want := range []string{"The index is behind: 300 changed sources are not yet indexed", "1 sources couldn't be read (chats/gcs:1: no driver)", `Nothing matches "wombat"`} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
}
