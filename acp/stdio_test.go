package acp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestStdioFraming(t *testing.T) {
	ctx := context.Background()
	in := "{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}"
	var out bytes.Buffer
	s := NewStdio(strings.NewReader(in), &out, 0)
	for _, want := range []string{`{"a":1}`, `{"b":2}`, `{"c":3}`} {
		got, err := s.ReadMessage(ctx)
		if err != nil || string(got) != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	if _, err := s.ReadMessage(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
	if err := s.WriteMessage(ctx, []byte("{\n  \"x\": [1,\n 2]\n}")); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "{\"x\":[1,2]}\n" {
		t.Errorf("wrote %q, want one compacted line", got)
	}
	if err := s.WriteMessage(ctx, []byte("not\njson")); err == nil {
		t.Error("a line break in something not JSON was written")
	}
}

func TestStdioLimit(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	s := NewStdio(strings.NewReader(long+"\n{}\n"), io.Discard, 100<<10)
	if _, err := s.ReadMessage(context.Background()); !errors.Is(err, ErrTooLong) {
		t.Errorf("a line past the limit: %v, want ErrTooLong", err)
	}
	s = NewStdio(strings.NewReader(long+"\n"), io.Discard, 200<<10)
	if got, err := s.ReadMessage(context.Background()); err != nil || len(got) != len(long) {
		t.Errorf("a line at the limit: %d bytes, %v", len(got), err)
	}
}

// TestStdioServe: Serve and Client talk over stdio framing through pipes,
// as the hub will with a stdio agent.
func TestStdioServe(t *testing.T) {
	ctx := testCtx(t)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, NewStdio(sr, sw, 0), "main", nil, newScripted()) }()
	c := NewClient(ctx, NewStdio(cr, cw, 0), nil)
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	res, err := c.Prompt(ctx, "default", []Block{{Type: "text", Text: "hi"}}, nil)
	if err != nil || res.StopReason != StopEndTurn {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	c.Close()
	if err := <-served; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// FuzzStdio: arbitrary input read as lines and decoded never panics, and
// every line read is within the limit and holds no line break.
func FuzzStdio(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}\n{}\r\n"))
	f.Add([]byte("\n\n\r\n"))
	f.Add([]byte(strings.Repeat("a", 300) + "\nb"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := NewStdio(bytes.NewReader(b), io.Discard, 256)
		for i := 0; i < 1000; i++ {
			msg, err := s.ReadMessage(context.Background())
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrTooLong) {
					t.Fatalf("read: %v", err)
				}
				return
			}
			if len(msg) > 256 || bytes.IndexByte(msg, '\n') >= 0 {
				t.Fatalf("read %q: past the limit or holding a line break", msg)
			}
			DecodeMessage(msg)
		}
	})
}

// TestStdioSkipLong: with SkipLong, a line past the limit is dropped, its
// first bytes handed over, and the lines after it are read, whether the
// long line's end came in the read that passed the limit or later.
func TestStdioSkipLong(t *testing.T) {
	for _, size := range []int{55 << 10, 64 << 10, 300 << 10} {
		long := `{"sessionId":"s1","x":"` + strings.Repeat("x", size) + `"}`
		s := NewStdio(strings.NewReader(long+"\n{\"a\":1}\n"), io.Discard, 50<<10)
		var skipped [][]byte
		s.SkipLong(func(p []byte) { skipped = append(skipped, append([]byte(nil), p...)) })
		got, err := s.ReadMessage(context.Background())
		if err != nil || string(got) != `{"a":1}` {
			t.Fatalf("after a %d-byte line: read %q, %v; want the next line", size, got, err)
		}
		if len(skipped) != 1 || !bytes.HasPrefix(skipped[0], []byte(`{"sessionId":"s1"`)) || len(skipped[0]) > 4<<10 {
			t.Errorf("skipped %d lines, first %.40q (%d bytes); want one, starting with its session, at most 4 KiB", len(skipped), skipped, len(skipped[0]))
		}
		if _, err := s.ReadMessage(context.Background()); !errors.Is(err, io.EOF) {
			t.Errorf("at the end: %v, want io.EOF", err)
		}
	}
}

// TestJoinedParams: params given as parts go over stdio as one line,
// byte for byte the params joined, whatever their size (a large message
// written, then its line break); parts holding a line break are joined
// and compacted.
func TestJoinedParams(t *testing.T) {
	big := strings.Repeat("p", 100<<10)
	for _, c := range []struct {
		parts Joined
		want  string
	}{
		{Joined{[]byte(`{"a":`), []byte(`"x y"`), []byte(`}`)}, `{"a":"x y"}`},
		{Joined{[]byte(`{"a":`), []byte(`"` + big + `"`), []byte(`}`)}, `{"a":"` + big + `"}`},
		{Joined{[]byte("{\n \"a\":"), []byte(` [1,` + "\n" + `2]`), []byte(`}`)}, `{"a":[1,2]}`},
	} {
		r, w := io.Pipe()
		c2 := NewConn(NewStdio(strings.NewReader(""), w, 0), nil)
		go c2.Notify(context.Background(), "m", c.parts)
		got, err := NewStdio(r, io.Discard, 0).ReadMessage(context.Background())
		want := `{"jsonrpc":"2.0","method":"m","params":` + c.want + `}`
		if err != nil || string(got) != want {
			t.Errorf("read %.80q..., %v; want %.80q...", got, err, want)
		}
		// A framer that writes no parts (a WebSocket) is given them joined.
		if enc, err := (&Message{Method: "m", parts: c.parts}).Encode(); err != nil || string(enc) != want {
			t.Errorf("encoded %.80q..., %v; want %.80q...", enc, err, want)
		}
	}
}
