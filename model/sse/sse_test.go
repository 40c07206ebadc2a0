package sse

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func readAll(t testing.TB, stream string) ([]Event, error) {
	t.Helper()
	r := NewReader(strings.NewReader(stream))
	var got []Event
	for r.Next() {
		e := r.Event()
		got = append(got, Event{Type: e.Type, Data: bytes.Clone(e.Data)})
	}
	return got, r.Err()
}

func TestReader(t *testing.T) {
	stream := ": a comment\n" +
		"event: message_start\ndata: {\"a\":1}\n\n" +
		"data: one\r\ndata:two\r\n\r\n" + // CRLF, a value without its space
		"event: ping\n\n" + // no data: not dispatched, and its type forgotten
		"id: 7\nretry: 10\ndata: [DONE]\n\n" +
		"data: cut short, never dispatched"
	got, err := readAll(t, stream)
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Type: "message_start", Data: []byte("{\"a\":1}\n")},
		{Data: []byte("one\ntwo\n")},
		{Data: []byte("[DONE]\n")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestReaderLongLine(t *testing.T) {
	long := strings.Repeat("x", 100<<10) // past the reader's buffer
	got, err := readAll(t, "data: "+long+"\n\n")
	if err != nil || len(got) != 1 || string(got[0].Data) != long+"\n" {
		t.Fatalf("%d events, %v", len(got), err)
	}
	_, err = readAll(t, "data: "+strings.Repeat("y", MaxEvent+1)+"\n\n")
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("an event past MaxEvent: %v", err)
	}
	_, err = readAll(t, strings.Repeat("data: "+strings.Repeat("z", 1<<20)+"\n", 17)+"\n")
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("an event of many lines past MaxEvent: %v", err)
	}
}

func TestReaderBrokenBody(t *testing.T) {
	broken := errors.New("connection reset")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotestErr{broken}))
	if !r.Next() || string(r.Event().Data) != "a\n" {
		t.Fatal("the first event")
	}
	if r.Next() || !errors.Is(r.Err(), broken) {
		t.Errorf("after a broken body: %v", r.Err())
	}
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

// Any bytes: no panic, every event has data ending in a newline, and no
// more data comes out than went in.
func FuzzReader(f *testing.F) {
	f.Add([]byte("event: a\ndata: b\n\n"))
	f.Add([]byte("data: x\r\n\r\n:c\n\ndata\n\n"))
	f.Add([]byte("\n\n\ndata:\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in))
		total := 0
		for r.Next() {
			d := r.Event().Data
			if len(d) == 0 || d[len(d)-1] != '\n' {
				t.Fatalf("data %q", d)
			}
			total += len(d)
		}
		if total > 2*len(in) {
			t.Fatalf("%d bytes of data from %d", total, len(in))
		}
	})
}

func TestPostRetries(t *testing.T) {
	var calls atomic.Int32
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After-Ms", "5")
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	var waits []time.Duration
	sleep := func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	body := `{"a":1}`
	req := Request{URL: srv.URL, Header: http.Header{"X-Test": {"1"}}, Size: int64(len(body)), Body: func() io.Reader { return strings.NewReader(body) }, Retries: 2, Sleep: sleep}
	res, err := Post(t.Context(), srv.Client(), req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("%v, %v", res, err)
	}
	res.Body.Close()
	if len(waits) != 2 || waits[0] != 5*time.Millisecond || waits[1] < 750*time.Millisecond || waits[1] > time.Second {
		t.Errorf("waits %v: Retry-After-Ms, then the backoff of try 1", waits)
	}
	if len(bodies) != 3 || bodies[2] != body {
		t.Errorf("bodies %q", bodies)
	}

	// No retry left: the refusal is returned as it came.
	calls.Store(0)
	req.Retries = 0
	res, err = Post(t.Context(), srv.Client(), req)
	if err != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("%v, %v", res, err)
	}
	res.Body.Close()
}

func TestRetryable(t *testing.T) {
	for status, want := range map[int]bool{400: false, 401: false, 408: true, 409: true, 429: true, 500: true, 529: true} {
		if got := Retryable(&http.Response{StatusCode: status, Header: http.Header{}}); got != want {
			t.Errorf("%d: %v", status, got)
		}
	}
	if Retryable(&http.Response{StatusCode: 503, Header: http.Header{"X-Should-Retry": {"false"}}}) ||
		!Retryable(&http.Response{StatusCode: 400, Header: http.Header{"X-Should-Retry": {"true"}}}) {
		t.Error("x-should-retry not taken")
	}
	if d := Backoff(&http.Response{Header: http.Header{"Retry-After": {"2"}}}, 0); d != 2*time.Second {
		t.Errorf("Retry-After 2: %v", d)
	}
	if d := Backoff(nil, 9); d > 8*time.Second || d < 6*time.Second {
		t.Errorf("the 10th try's backoff %v", d)
	}
}
