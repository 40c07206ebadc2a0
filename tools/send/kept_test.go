package send_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/tools/send"
)

// TestKeptEveryPage: answers kept past one message's frame (three of
// 6 MiB) are all read by Kept, a page at a time, each once, and left
// kept.
func TestKeptEveryPage(t *testing.T) {
	r := harnesstest.New(t)
	want := map[string]bool{}
	for _, thread := range []string{"link:a", "link:b", "telegram:1"} {
		text := thread + strings.Repeat(".", 6<<20)
		if _, err := r.Answers().Keep(t.Context(), thread, text, time.Now(), 0); err != nil {
			t.Fatal(err)
		}
		want[text] = true
	}
	all, err := send.Kept(t.Context(), target(r))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, k := range all {
		if got[k.Text] || !want[k.Text] || k.ID == "" {
			t.Fatalf("%s (%d bytes): read twice, not kept, or without its id", k.Thread, len(k.Text))
		}
		got[k.Text] = true
	}
	if len(got) != len(want) {
		t.Fatalf("read %d of %d answers kept", len(got), len(want))
	}
	if left, err := r.Answers().Pending(t.Context()); err != nil || len(left) != 3 {
		t.Fatalf("left kept: %d, %v; want all 3", len(left), err)
	}
}
