package log_test

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// BenchmarkDriver measures appends (each synced before the next) and the
// latest 32 events of conversations of 10k and 100k, which the log reads
// backwards from the end: the two should cost the same.
func BenchmarkDriver(b *testing.B) {
	storetest.Benchmarks{
		Open: func(tb testing.TB) store.Conversations { return log.Open(tb.TempDir()) },
		Fill: fill,
	}.Run(b)
}

// fill writes events as thread's events.jsonl in one buffered write and
// one sync, as the appends one by one would have left it.
func fill(tb testing.TB, c store.Conversations, thread string, events []store.Event) {
	dir, err := c.(*log.Driver).Folder(thread)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, log.EventsFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	for _, e := range events {
		e.Time = e.Time.UTC()
		line, err := store.MarshalLine(e)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
}
