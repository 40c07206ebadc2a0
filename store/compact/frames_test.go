package compact

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/klauspost/compress/zstd"

	"github.com/lnk-dev/link/store"
)

// samples are contents whose frames take each kind of block: raw (random
// bytes), RLE (one byte repeated), compressed (text), several of each.
func samples() map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 150<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	var text strings.Builder
	for i := 0; text.Len() < 300<<10; i++ {
		fmt.Fprintf(&text, "line %d of a text that repeats with a number: %d\n", i, rng.IntN(1000))
	}
	return map[string][]byte{
		"random": random,
		"zeros":  make([]byte, 300<<10),
		"text":   []byte(text.String()),
		"short":  []byte("a\n"),
	}
}

// wantFrames checks that walking data finds exactly the frames that end
// at ends, whole.
func wantFrames(t *testing.T, what string, data []byte, ends []int64) {
	t.Helper()
	var got []int64
	end, cut, err := walk(bytes.NewReader(data), 0, int64(len(data)), func(f frame) error {
		got = append(got, f.end)
		return nil
	})
	if err != nil || cut || end != int64(len(data)) {
		t.Fatalf("%s: walk ends at %d of %d, cut %v, %v", what, end, len(data), cut, err)
	}
	if fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Fatalf("%s: frames end at %v, want %v", what, got, ends)
	}
}

// TestWalk walks frames of every kind of block, with and without a
// checksum, between skippable frames, as klauspost/compress writes them.
func TestWalk(t *testing.T) {
	var data []byte
	var ends []int64
	add := func(f []byte) {
		data = append(data, f...)
		ends = append(ends, int64(len(data)))
	}
	add(skippableFrame([]byte(`{"thread":"default"}`)))
	for _, crc := range []bool{true, false} {
		for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, Level} {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderCRC(crc))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range samples() {
				add(enc.EncodeAll(s, nil))
			}
			add(skippableFrame(nil))
		}
	}
	wantFrames(t, "klauspost's frames", data, ends)
	// Cut anywhere inside the last frame, the walk stops before it.
	last := ends[len(ends)-2]
	for cut := last; cut < int64(len(data)); cut += 1 + cut%97 {
		end, isCut, err := walk(bytes.NewReader(data[:cut]), 0, cut, func(frame) error { return nil })
		if err != nil || end != last || isCut != (cut > last) {
			t.Fatalf("cut at %d: walk ends at %d, cut %v, %v; want %d", cut, end, isCut, err, last)
		}
	}
}

// TestWalkReference walks frames the reference zstd writes: levels 12 and 6,
// with and without a checksum, and without a content size (from a pipe).
func TestWalkReference(t *testing.T) {
	if _, err := exec.LookPath("zstd"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no zstd command: .ci/run installs it, and this test needs it in CI")
		}
		t.Skip("no zstd command (apt-get install zstd)")
	}
	var data []byte
	var ends []int64
	for _, args := range [][]string{{"-12", "-c"}, {"-6", "-c", "--no-check"}, {"-3", "-c", "--no-content-size"}} {
		for name, s := range samples() {
			cmd := exec.Command("zstd", append(args, "-q", "-")...)
			cmd.Stdin = bytes.NewReader(s)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("zstd %v of %s: %v", args, name, err)
			}
			data = append(data, out...)
			ends = append(ends, int64(len(data)))
		}
	}
	wantFrames(t, "zstd's frames", data, ends)
}

// readEvents reads data as an events.zst with a driver of no folder.
func readEvents(t testing.TB, data []byte) (framed, error) {
	d := Open(t.TempDir())
	defer d.Close()
	return d.readFrames(data)
}

// TestFrameEvents reads frames of events, and refuses frames that aren't.
func TestFrameEvents(t *testing.T) {
	d := Open(t.TempDir())
	defer d.Close()
	lines := func(from, to int64) []byte {
		var b []byte
		for seq := from; seq <= to; seq++ {
			l, err := store.MarshalLine(store.Event{Seq: seq, Kind: store.KindMessage, Time: time.Unix(seq, 0).UTC(), Text: "hi"})
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, l...)
		}
		return b
	}
	frame := func(content []byte) []byte {
		f, err := d.encode(content)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	head := skippableFrame([]byte(`{"thread":"default"}`))
	good := append(append(bytes.Clone(head), frame(lines(1, 3))...), frame(lines(4, 9))...)
	fr, err := d.readFrames(good)
	if err != nil {
		t.Fatal(err)
	}
	type read struct {
		Events int
		Last   int64
		Cut    bool
		End    int64
	}
	if diff := cmp.Diff(read{9, 9, false, int64(len(good))}, read{len(fr.lines), fr.last(), fr.cut, fr.end}); diff != "" {
		t.Fatalf("read (-want +got):\n%s", diff)
	}
	if es, err := fr.events(0); err != nil || len(es) != 9 || es[8].Seq != 9 || es[8].Text != "hi" {
		t.Fatalf("events: %d, %v", len(es), err)
	}
	at := len(head)
	// A line parsed whole only when read, as Latest reads them.
	bad := append(bytes.Clone(head), frame(append(lines(1, 2), `{"seq":3,"kind":""}`+"\n"...))...)
	fr, err = d.readFrames(bad)
	if err != nil || fr.last() != 3 {
		t.Fatalf("read: last %d, %v", fr.last(), err)
	}
	if _, err := fr.events(1); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("frame at byte %d, line 3", at)) {
		t.Fatalf("events of a frame with a line that isn't one: %v, want ErrCorrupt naming it", err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"a gap", append(append(bytes.Clone(head), frame(lines(1, 3))...), frame(lines(5, 9))...), "frame at byte"},
		{"not from 1", append(bytes.Clone(head), frame(lines(2, 3))...), fmt.Sprintf("frame at byte %d, line 1", at)},
		{"no newline", append(bytes.Clone(head), frame(bytes.TrimSuffix(lines(1, 2), []byte("\n")))...), fmt.Sprintf("frame at byte %d", at)},
		{"empty", append(bytes.Clone(head), frame(nil)...), fmt.Sprintf("frame at byte %d", at)},
		{"not an event", append(bytes.Clone(head), frame([]byte("{}\n"))...), fmt.Sprintf("frame at byte %d, line 1", at)},
		{"two numbers", append(bytes.Clone(head), frame([]byte(`{"seq":1,"kind":"message","seq":2}`+"\n"))...), fmt.Sprintf("frame at byte %d, line 1", at)},
		{"not zstd", append(bytes.Clone(head), "plain text\n"...), fmt.Sprintf("frame at byte %d", at)},
	} {
		fr, err := d.readFrames(tc.data)
		if err == nil {
			_, err = fr.events(0)
		}
		if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrCorrupt naming %q", tc.name, err, tc.want)
		}
	}
}

// seedFrames are events.zst files for the fuzzers to start from.
func seedFrames(f *testing.F) [][]byte {
	d := Open(f.TempDir())
	defer d.Close()
	var content []byte
	for seq := int64(1); seq <= 5; seq++ {
		l, _ := store.MarshalLine(store.Event{Seq: seq, Kind: store.KindAnswer, Text: strings.Repeat("word ", int(seq))})
		content = append(content, l...)
	}
	fr, err := d.encode(content)
	if err != nil {
		f.Fatal(err)
	}
	head, _ := threadFrame("telegram:42")
	whole := append(bytes.Clone(head), fr...)
	return [][]byte{
		nil, head, whole, whole[:len(whole)-5], whole[:len(head)+7],
		append(bytes.Clone(whole), head...),
		[]byte("\x28\xb5\x2f\xfd\x00\x00\x01\x00\x00"),
	}
}

// FuzzFrames reads arbitrary bytes as an events.zst: events numbered
// from 1, or an error wrapping ErrCorrupt; never a panic.
func FuzzFrames(f *testing.F) {
	for _, s := range seedFrames(f) {
		f.Add(s)
	}
	d := Open(f.TempDir())
	defer d.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := d.readFrames(data)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("%v, not ErrCorrupt", err)
			}
			return
		}
		for i, l := range fr.lines {
			if l.seq != int64(i+1) {
				t.Fatalf("line %d is #%d", i, l.seq)
			}
		}
		es, err := fr.events(0)
		if err != nil && !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("events: %v, not ErrCorrupt", err)
		}
		for i, e := range es {
			if e.Seq != int64(i+1) {
				t.Fatalf("event %d is #%d", i, e.Seq)
			}
		}
		if fr.end > int64(len(data)) || !fr.cut && fr.end != int64(len(data)) {
			t.Fatalf("whole frames end at %d of %d, cut %v", fr.end, len(data), fr.cut)
		}
		// What ends the whole frames reads the same alone.
		again, err := d.readFrames(data[:fr.end])
		if err != nil || again.cut || len(again.lines) != len(fr.lines) {
			t.Fatalf("the whole frames alone: %d events, cut %v, %v; want %d", len(again.lines), again.cut, err, len(fr.lines))
		}
	})
}

// FuzzTail reads arbitrary bytes as a tail after frames ending at last:
// events numbered on from last, or an error wrapping ErrCorrupt.
func FuzzTail(f *testing.F) {
	var tail []byte
	for seq := int64(3); seq <= 6; seq++ {
		l, _ := store.MarshalLine(store.Event{Seq: seq, Kind: store.KindMessage, Text: "hi"})
		tail = append(tail, l...)
	}
	f.Add(tail, int64(2), false)
	f.Add(tail, int64(4), true)
	f.Add(tail[:len(tail)-3], int64(0), false)
	f.Add([]byte("\n\n"), int64(0), false)
	f.Add([]byte(`{"seq":1,"kind":"message"}`+"\n"+`{"seq":2}`), int64(0), true)
	f.Fuzz(func(t *testing.T, data []byte, last int64, cut bool) {
		lines, complete, err := parseTail(data)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("%v, not ErrCorrupt", err)
			}
			return
		}
		if complete > len(data) || complete > 0 && data[complete-1] != '\n' || bytes.IndexByte(data[complete:], '\n') >= 0 {
			t.Fatalf("complete lines end at %d of %d", complete, len(data))
		}
		for i := 1; i < len(lines); i++ {
			if lines[i].event.Seq != lines[i-1].event.Seq+1 {
				t.Fatalf("line %d is #%d after #%d", i+1, lines[i].event.Seq, lines[i-1].event.Seq)
			}
		}
		kept, err := merge(last, 0, cut, lines)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("merge: %v, not ErrCorrupt", err)
			}
			return
		}
		if cut && len(kept) == 0 || len(kept) > 0 && kept[0].event.Seq != last+1 {
			t.Fatalf("merge after %d (cut %v) keeps %d lines", last, cut, len(kept))
		}
	})
}
