//go:build linux

package transcript_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/lnk-dev/link/internal/stracecount"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/internal/fixture"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/transcript"
)

// envAppends, set, makes TestAppendSyscalls the process counted: that
// many appends to a copy, in the folder envHome names.
const envAppends, envHome = "LNK_TEST_COPY_APPENDS", "LNK_TEST_COPY_HOME"

// TestAppendSyscalls: adding a turn's message and answer to the copy is
// one open of chat.md, a look at its length, one read of its end, one
// write and a close, by strace -f -c's count (40 appends less 10): no
// fcntl(2) of the open file, no stat of it, nothing else.
func TestAppendSyscalls(t *testing.T) {
	if n := os.Getenv(envAppends); n != "" {
		appends, err := strconv.Atoi(n)
		if err != nil {
			t.Fatal(err)
		}
		appendTurns(t, os.Getenv(envHome), appends)
		return
	}
	count := func(appends int) map[string]int {
		return stracecount.Count(t, "TestAppendSyscalls", envHome+"="+t.TempDir(), envAppends+"="+strconv.Itoa(appends))
	}
	few, many := count(10), count(40)
	want := map[string]int{"openat": 1, "lseek": 1, "pread64": 1, "write": 1, "close": 1, "fcntl": 0, "fstat": 0, "newfstatat": 0, "statx": 0}
	for call, n := range want {
		if got := float64(many[call]-few[call]) / 30; got != float64(n) {
			t.Errorf("%s: %.2f an append, want %d", call, got, n)
		}
	}
}

// appendTurns adds turns message and answer pairs to the copy of a log
// conversation in home, each from what its turn holds, as a turn does.
func appendTurns(t *testing.T, home string, turns int) {
	ctx := context.Background()
	p, err := store.For(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	const thread = "telegram:42"
	dir, err := p.Conversation(thread)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	es := fixture.Conversation(turns+1, "a")
	start := 0
	for i, e := range es {
		if !store.FinalAnswer(e) {
			continue
		}
		if err := transcript.Append(ctx, p, nil, thread, log.Name, es[start:i+1]); err != nil {
			t.Fatal(err)
		}
		start = i + 1
	}
}
