package bridge_test

import (
	"bufio"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// BenchmarkBridge measures what the bridge adds to a driver's calls: the
// log driver's appends (each synced before the next) and its latest 32 of
// conversations of 10k and 100k events, called directly and through the
// bridge on a unix socket and on a loopback port.
func BenchmarkBridge(b *testing.B) {
	benchBridge(b, func(tb testing.TB) string { return tb.TempDir() })
}

// BenchmarkBridgeMemory is BenchmarkBridge with the log's files in
// /dev/shm, a tmpfs, whose sync costs nothing: what is left of a call is
// the driver's work and the bridge's, not the disk's, so the bridge's
// share shows however busy the disk is.
func BenchmarkBridgeMemory(b *testing.B) {
	if _, err := os.Stat("/dev/shm"); err != nil {
		b.Skip("no /dev/shm")
	}
	benchBridge(b, func(tb testing.TB) string {
		dir, err := os.MkdirTemp("/dev/shm", "lnk-bridge-bench")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	})
}

// benchBridge runs the benchmarks with the log driver's folders made by
// dir.
func benchBridge(b *testing.B, dir func(tb testing.TB) string) {
	// The log driver behind each client, for fill to write its file.
	var mu sync.Mutex
	drivers := map[store.Conversations]*log.Driver{}
	through := func(network string) func(tb testing.TB) store.Conversations {
		return func(tb testing.TB) store.Conversations {
			s := serveDir(tb, network, dir(tb))
			mu.Lock()
			drivers[s.client] = s.driver
			mu.Unlock()
			return s.client
		}
	}
	fill := func(tb testing.TB, c store.Conversations, thread string, events []store.Event) {
		d, ok := c.(*log.Driver)
		if !ok {
			mu.Lock()
			d = drivers[c]
			mu.Unlock()
		}
		fillLog(tb, d, thread, events)
	}
	for _, tc := range []struct {
		name string
		open func(tb testing.TB) store.Conversations
	}{
		{"Direct", func(tb testing.TB) store.Conversations { return log.Open(dir(tb)) }},
		{"Unix", through("unix")},
		{"Loopback", through("tcp")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			storetest.Benchmarks{Open: tc.open, Fill: fill}.Run(b)
		})
	}
}

// fillLog writes events as thread's events.jsonl in one write and one
// sync, as appends one by one would have left it.
func fillLog(tb testing.TB, d *log.Driver, thread string, events []store.Event) {
	dir, err := d.Folder(thread)
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
