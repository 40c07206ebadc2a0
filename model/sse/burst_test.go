package sse

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/model"
)

// drained serves its input, then counts each read past it and fails it:
// a read the Reader makes after its input is one that would wait on the
// network.
type drained struct {
	in    *strings.Reader
	extra int
}

var errWouldWait = errors.New("would wait on the network")

func (d *drained) Read(p []byte) (int, error) {
	if d.in.Len() > 0 {
		return d.in.Read(p)
	}
	d.extra++
	return 0, errWouldWait
}

// Ready says an event is buffered whole exactly when Next then returns
// one without reading the stream again.
func TestReady(t *testing.T) {
	for _, c := range []struct {
		rest  string // what is buffered after the first event
		ready bool
	}{
		{"data: two\n\n", true},
		{"data:two\r\n\r\n", true},
		{"event: x\ndata\n\n", true}, // a data field without a value
		{": only a comment\n\n", false},
		{"event: ping\n\n", false}, // no data: not dispatched, Next reads on
		{"data: two\n", false},     // the blank line not come yet
		{"data: tw", false},
		{"", false},
		{"\n\ndata: two\n\n", true},
		{"datum: x\n\n", false},
	} {
		d := &drained{in: strings.NewReader("data: one\n\n" + c.rest)}
		r := NewReader(d)
		if !r.Next() {
			t.Fatalf("%q: no first event", c.rest)
		}
		if got := r.Ready(); got != c.ready {
			t.Errorf("Ready with %q buffered = %v, want %v", c.rest, got, c.ready)
		}
		if c.ready && (!r.Next() || d.extra > 1) {
			t.Errorf("%q: Ready, but Next read the stream again", c.rest)
		}
	}
}

// The fuzzer holds Ready to Next: when Ready says an event is buffered,
// Next returns it without another read of the stream.
func FuzzReady(f *testing.F) {
	f.Add("data: one\n\ndata: two\n\n: c\n\ndata: three\r\n\r\nevent: e\n")
	f.Add("data\n\n\n\ndata:x\r\n\r\ndata: y\n")
	f.Fuzz(func(t *testing.T, stream string) {
		d := &drained{in: strings.NewReader(stream)}
		r := NewReader(d)
		for i := 0; i < 1000; i++ {
			ready := r.Ready()
			before := d.extra
			ok := r.Next()
			if ready && (!ok || d.extra != before) {
				t.Fatalf("event %d: Ready, but Next gave %v after %d more reads", i, ok, d.extra-before)
			}
			if !ok {
				return
			}
		}
	})
}

// A burst's deltas but its last say More; its last goes, without More,
// before the stream is read again: the writer below sends the second
// burst only once the first's last delta is handed on, so a delta held
// for the network would stall the test and fail it. Events that add no
// delta (pings) between change nothing.
func TestBurstHandsOnBeforeWaiting(t *testing.T) {
	pr, pw := io.Pipe()
	gone := make(chan struct{}, 4) // a delta without More handed on
	go func() {
		for _, burst := range [][]string{{"a", "b", "c"}, {"d", "e"}} {
			var b strings.Builder
			for _, s := range burst {
				fmt.Fprintf(&b, "data: %s\n\nevent: ping\ndata: {}\n\n", s)
			}
			if _, err := pw.Write([]byte(b.String())); err != nil {
				return
			}
			select {
			case <-gone:
			case <-time.After(10 * time.Second):
				pw.CloseWithError(errors.New("a burst's last delta wasn't handed on in 10 s"))
				return
			}
		}
		pw.Close()
	}()
	var got []string
	b := NewBurst(func(d model.Delta) error {
		got = append(got, fmt.Sprintf("%s %v", d.Text, d.More))
		if !d.More {
			gone <- struct{}{}
		}
		return nil
	})
	r := NewReader(pr)
	for {
		ok, err := b.Next(r)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if data := strings.TrimSpace(string(r.Event().Data)); data != "{}" {
			if err := b.Add(model.Delta{Text: data}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := "a true|b true|c false|d true|e false"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("handed on %s, want %s", g, want)
	}
}

// An error from onDelta ends the stream with it, nothing held after.
func TestBurstError(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	b := NewBurst(func(model.Delta) error { calls++; return stop })
	if err := b.Add(model.Delta{Text: "a"}); err != nil {
		t.Fatal(err) // held, not handed on yet
	}
	if err := b.Add(model.Delta{Text: "b"}); !errors.Is(err, stop) {
		t.Fatalf("Add = %v, want onDelta's error", err)
	}
	if err := b.Flush(); err != nil || calls != 1 {
		t.Fatalf("Flush after the error = %v, onDelta called %d times; want nothing held, 1", err, calls)
	}
}
