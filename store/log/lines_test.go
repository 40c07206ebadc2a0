package log

import (
	"bytes"
	"io"
	"os"
	"sync/atomic"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/storetest"
)

// forward is what backwards must find: the complete lines of data, in
// order, without their newlines, and where each starts.
func forward(data []byte) (lines [][]byte, offs []int64) {
	off := int64(0)
	for {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return lines, offs
		}
		lines = append(lines, data[off:off+int64(i)])
		offs = append(offs, off)
		off += int64(i) + 1
	}
}

// FuzzBackwards checks the backwards line reader against a forward split
// of any bytes, with reads of any size, and long lines read at once past
// a few bytes as well as past a MiB: never a panic, the same lines.
func FuzzBackwards(f *testing.F) {
	f.Add([]byte("a\nbb\nccc\n"), uint8(1))
	f.Add([]byte("a\nbb\npartial"), uint8(2))
	f.Add([]byte("\n\n\n"), uint8(1))
	f.Add([]byte("no newline"), uint8(3))
	f.Add([]byte(""), uint8(1))
	f.Add([]byte("{\"seq\":1,\"kind\":\"message\"}\n{\"seq\":2,\"kind\":\"answer\"}\n"), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, size uint8) {
		for _, long := range []int64{1 << 20, 3} {
			was := longLine
			longLine = long
			backwardsAsForwards(t, data, size)
			longLine = was
		}
	})
}

func backwardsAsForwards(t *testing.T, data []byte, size uint8) {
	r := bytes.NewReader(data)
	first := int64(size) + 1
	read, err := readTail(r, int64(len(data)), first)
	if err != nil {
		t.Fatal(err)
	}
	defer read.release()
	if want := int64(bytes.LastIndexByte(data, '\n') + 1); read.end != want {
		t.Fatalf("complete end %d, want %d", read.end, want)
	}
	if n := int64(len(read.win)); read.win != nil && !bytes.Equal(read.win, data[read.end-n:read.end]) {
		t.Fatalf("the tail read %q, want %q", read.win, data[read.end-n:read.end])
	}
	// From the tail read, and from its end alone, reading all before it.
	for _, from := range []tail{read, {end: read.end}} {
		wantLines, wantOffs := forward(data)
		var got [][]byte
		var offs []int64
		err = backwardsFrom(r, from, first, func(line []byte, off int64) (bool, error) {
			got = append(got, bytes.Clone(line))
			offs = append(offs, off)
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(wantLines) {
			t.Fatalf("%d lines backwards, %d forwards", len(got), len(wantLines))
		}
		for i := range got {
			j := len(got) - 1 - i
			if !bytes.Equal(got[i], wantLines[j]) || offs[i] != wantOffs[j] {
				t.Fatalf("line %d backwards is %q at %d, want %q at %d", i, got[i], offs[i], wantLines[j], wantOffs[j])
			}
		}
		// Stopped early, it gives the last lines only.
		n := 0
		_ = backwardsFrom(r, from, first, func(line []byte, off int64) (bool, error) {
			n++
			return n < 2, nil
		})
		if n != min(2, len(wantLines)) {
			t.Fatalf("stopped after 2, it gave %d lines", n)
		}
	}
}

// counting counts the bytes read through it.
type counting struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *counting) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// TestLatestReadsLittle proves the latest 32 events read the same bytes
// from a conversation of a thousand events and of twenty thousand: the
// cost of a turn's read doesn't grow with the conversation.
func TestLatestReadsLittle(t *testing.T) {
	var read []int64
	for _, n := range []int{1_000, 20_000} {
		var b bytes.Buffer
		for _, e := range storetest.BenchEvents(n) {
			line, err := store.MarshalLine(e)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
		}
		c := &counting{r: bytes.NewReader(b.Bytes())}
		tl, err := readTail(c, int64(b.Len()), block)
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		es, err := lastLines(c, tl, block, "events.jsonl", func(store.Event) bool { count++; return count >= 32 })
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 32 || es[31].Seq != int64(n) {
			t.Fatalf("latest 32 of %d: %d events", n, len(es))
		}
		read = append(read, c.n.Load())
	}
	if read[0] != read[1] || read[1] > 4*block {
		t.Fatalf("latest 32 read %d bytes of 1k events and %d of 20k; want the same, at most %d", read[0], read[1], 4*block)
	}
	t.Logf("latest 32 read %d bytes at 1k events and at 20k", read[1])
}

// longLineSeq reads a long last line's number from its start, holding a
// block of it at most, and leaves any other line to be parsed.
func TestLongLineSeq(t *testing.T) {
	first, _ := store.MarshalLine(store.Event{Seq: 1, Kind: store.KindMessage, Text: "hi"})
	long, _ := store.MarshalLine(store.Event{Seq: 2, Kind: store.KindMessage, Text: string(bytes.Repeat([]byte("long "), 3*block))})
	short, _ := store.MarshalLine(store.Event{Seq: 3, Kind: store.KindAnswer, Text: "ok"})
	other := []byte(`{"kind":"message","seq":2,"text":"` + string(bytes.Repeat([]byte("x"), 2*block)) + "\"}\n")
	for _, c := range []struct {
		name    string
		data    []byte
		seq     int64
		ok      bool
		lastSeq int64
	}{
		{"long last", append(append([]byte{}, first...), long...), 2, true, 2},
		{"long, the file's only line", long, 2, true, 2},
		{"short last", append(append(append([]byte{}, first...), long...), short...), 0, false, 3},
		{"long, not as MarshalLine writes it", append(append([]byte{}, first...), other...), 0, false, 2},
	} {
		f, err := os.CreateTemp(t.TempDir(), "events")
		if err != nil {
			t.Fatal(err)
		}
		f.Write(c.data)
		seq, ok, err := longLineSeq(f, int64(len(c.data)))
		if err != nil || seq != c.seq || ok != c.ok {
			t.Errorf("%s: longLineSeq = %d, %v, %v; want %d, %v", c.name, seq, ok, err, c.seq, c.ok)
		}
		tl, err := readTail(f, int64(len(c.data)), smallBlock)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := lastSeq(f, tl); err != nil || got != c.lastSeq {
			t.Errorf("%s: lastSeq = %d, %v; want %d", c.name, got, err, c.lastSeq)
		}
		tl.release()
		f.Close()
	}
}

// TestSeqPrefix: an event's number is read from the start of its line as
// MarshalLine writes it, and nothing else is taken for one.
func TestSeqPrefix(t *testing.T) {
	line, err := store.MarshalLine(storetest.Event(12, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if seq, ok := seqPrefix(line); !ok || seq != 12 {
		t.Fatalf("seqPrefix(%s) = %d, %v", line, seq, ok)
	}
	for _, bad := range []string{``, `{"seq":`, `{"seq":12}`, `{"seq":0,"kind":"message"}`, `{"seq":-1,`, `{"seq":1e3,`, `{"seq":99999999999999999999999,`, `{"kind":"message","seq":12}`, ` {"seq":12,`, `{"seq":12345678901234567890123456789`} {
		if seq, ok := seqPrefix([]byte(bad)); ok {
			t.Errorf("seqPrefix(%s) = %d, want none", bad, seq)
		}
	}
}
