package compact

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/storetest"
)

// fill writes events (numbered from 1) as thread's conversation, as one
// append after another would leave it, without an fsync each: frames of
// FoldEvents, the rest (1 to FoldEvents of them) in the tail.
func fill(tb testing.TB, d *Driver, thread string, events []store.Event) {
	dir, err := d.dir(thread)
	if err != nil {
		tb.Fatal(err)
	}
	if err := begin(dir, thread); err != nil {
		tb.Fatal(err)
	}
	lines := make([][]byte, len(events))
	for i, e := range events {
		if lines[i], err = store.MarshalLine(e); err != nil {
			tb.Fatal(err)
		}
	}
	framed := 0
	if len(events) > 0 {
		framed = len(events) - ((len(events)-1)%FoldEvents + 1)
	}
	frames := make([][]byte, framed/FoldEvents)
	errs := make([]error, len(frames))
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				frames[i], errs[i] = d.encode(bytes.Join(lines[i*FoldEvents:(i+1)*FoldEvents], nil))
			}
		})
	}
	for i := range frames {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
	zst, err := os.OpenFile(filepath.Join(dir, zstName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer zst.Close()
	if _, err := zst.Write(bytes.Join(frames, nil)); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tailName), bytes.Join(lines[framed:], nil), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func TestFill(t *testing.T) {
	d := Open(t.TempDir())
	defer d.Close()
	want := storetest.Events(3*FoldEvents+1, "a")
	fill(t, d, "default", want)
	got, err := d.Read(context.Background(), "default", 1)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Same(t, "filled", got, want)
	// What fill leaves takes the next append as the appends' would.
	if err := d.Append(context.Background(), "default", storetest.Event(3*FoldEvents+2, "a")); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDriver is storetest's benchmarks: appends, each durable, and
// the latest 32 events of conversations of 10k and 100k events.
func BenchmarkDriver(b *testing.B) {
	storetest.Benchmarks{
		Open: func(tb testing.TB) store.Conversations {
			d := Open(tb.TempDir())
			tb.Cleanup(func() { d.Close() })
			return d
		},
		Fill: func(tb testing.TB, c store.Conversations, thread string, events []store.Event) {
			fill(tb, c.(*Driver), thread, events)
		},
	}.Run(b)
}

// folds is the contents of a realistic conversation's folds: n of them,
// each FoldEvents events' lines.
func folds(tb testing.TB, n int) [][]byte {
	es := newChat(tb, 7).events(n * FoldEvents)
	out := make([][]byte, n)
	for i := range out {
		for _, e := range es[i*FoldEvents : (i+1)*FoldEvents] {
			l, err := store.MarshalLine(e)
			if err != nil {
				tb.Fatal(err)
			}
			out[i] = append(out[i], l...)
		}
	}
	return out
}

// BenchmarkFold compresses a realistic conversation's folds at each level
// klauspost/compress has above its fastest: the ratio, the time of a fold
// with an encoder at hand (warm) and with one made for it (cold, as after
// a garbage collection emptied the pool), and what an encoder allocates.
// Ref19 is the reference zstd at level 19, the spec's, for its ratio.
func BenchmarkFold(b *testing.B) {
	contents := folds(b, 64)
	corpus, err := os.ReadFile("testdata/corpus.txt")
	if err != nil {
		b.Fatal(err)
	}
	for _, level := range []zstd.EncoderLevel{zstd.SpeedDefault, zstd.SpeedBetterCompression, zstd.SpeedBestCompression} {
		newEnc := func() *zstd.Encoder {
			enc, err := zstd.NewWriter(nil, encoderOptions(level)...)
			if err != nil {
				b.Fatal(err)
			}
			return enc
		}
		b.Run(level.String()+"/warm", func(b *testing.B) {
			enc := newEnc()
			var in, out int
			for _, c := range contents {
				in += len(c)
				out += len(enc.EncodeAll(c, nil))
			}
			// Real English, not generated: the spec in 32 KB pieces.
			var cin, cout int
			for p := corpus; len(p) > 0; p = p[min(len(p), 32<<10):] {
				cin += min(len(p), 32<<10)
				cout += len(enc.EncodeAll(p[:min(len(p), 32<<10)], nil))
			}
			i := 0
			for b.Loop() {
				enc.EncodeAll(contents[i%len(contents)], nil)
				i++
			}
			b.ReportMetric(float64(in)/float64(out), "ratio")
			b.ReportMetric(float64(cin)/float64(cout), "corpus-ratio")
			b.ReportMetric(float64(in)/float64(len(contents))/1024, "KB-in/fold")
		})
		b.Run(level.String()+"/cold", func(b *testing.B) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			newEnc().EncodeAll(contents[0], nil)
			runtime.ReadMemStats(&m1)
			i := 0
			for b.Loop() {
				newEnc().EncodeAll(contents[i%len(contents)], nil)
				i++
			}
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/(1<<20), "MB/encoder")
		})
	}
	b.Run("Ref19", func(b *testing.B) {
		if _, err := exec.LookPath("zstd"); err != nil {
			b.Skip("no zstd command")
		}
		var in, out int
		for _, c := range contents {
			cmd := exec.Command("zstd", "-19", "-c", "-q", "-")
			cmd.Stdin = bytes.NewReader(c)
			z, err := cmd.Output()
			if err != nil {
				b.Fatal(err)
			}
			in, out = in+len(c), out+len(z)
		}
		for b.Loop() {
		}
		b.ReportMetric(float64(in)/float64(out), "ratio")
	})
}

// BenchmarkChat keeps a realistic conversation of 2,048 events as the
// driver does, and as the log does (the same lines in one file), and
// reads it back whole: bytes on disk of each, and the time of a read.
func BenchmarkChat(b *testing.B) {
	const n = 2048
	es := newChat(b, 11).events(n)
	chats := b.TempDir()
	d := Open(chats)
	defer d.Close()
	fill(b, d, "telegram:42", es)
	var logBytes int
	for _, e := range es {
		l, err := store.MarshalLine(e)
		if err != nil {
			b.Fatal(err)
		}
		logBytes += len(l)
	}
	var compact int64
	for _, name := range []string{zstName, tailName} {
		fi, err := os.Stat(filepath.Join(chats, "telegram-42", name))
		if err != nil {
			b.Fatal(err)
		}
		compact += fi.Size()
	}
	got, err := d.Read(context.Background(), "telegram:42", 1)
	if err != nil {
		b.Fatal(err)
	}
	storetest.Same(b, "chat", got, es)
	for b.Loop() {
		if _, err := d.Read(context.Background(), "telegram:42", 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(logBytes)/n, "log-B/event")
	b.ReportMetric(float64(compact)/n, "compact-B/event")
	b.ReportMetric(float64(logBytes)/float64(compact), "ratio")
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events-read/s")
}

// TestLevel holds the driver to the level
// docs/decisions/007-compact-zstd-level.md chose, by its figures: the
// realistic chat's first 8 folds compress 3.16x at SpeedBestCompression,
// 3.06x at SpeedBetterCompression, 3.00x at SpeedDefault.
func TestLevel(t *testing.T) {
	d := Open(t.TempDir())
	defer d.Close()
	var in, out int
	for _, c := range folds(t, 8) {
		f, err := d.encode(c)
		if err != nil {
			t.Fatal(err)
		}
		in, out = in+len(c), out+len(f)
	}
	if ratio := float64(in) / float64(out); ratio < 3.1 {
		t.Fatalf("folds compress %.3fx, want at least 3.1x", ratio)
	}
}
