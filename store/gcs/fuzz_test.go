package gcs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// Every number's name parses back to it, and the names sort as the
// numbers do.
func TestEventNames(t *testing.T) {
	folder := "agents/main/chats/default/"
	seqs := []int64{1, 2, 9, 10, 42, 99, 100, 1_000_000, 1<<62 + 3, 1<<63 - 1}
	for i, seq := range seqs {
		name := eventName(folder, seq)
		got, err := parseSeq(folder, name)
		if err != nil || got != seq {
			t.Fatalf("parse %s: %d, %v; want %d", name, got, err, seq)
		}
		if i > 0 && eventName(folder, seqs[i-1]) >= name {
			t.Fatalf("%s sorts before %s", name, eventName(folder, seqs[i-1]))
		}
	}
	for _, name := range []string{
		folder + "events/00000000000000000000.json",
		folder + "events/0000000000000000001.json",
		folder + "events/-0000000000000000001.json",
		folder + "events/+0000000000000000001.json",
		folder + "events/99999999999999999999.json",
		folder + "events/00000000000000000001.jsonl",
		folder + "events/notes.txt",
		"agents/main/chats/other/events/00000000000000000001.json",
	} {
		if seq, err := parseSeq(folder, name); err == nil {
			t.Errorf("parse %s: %d, want an error", name, seq)
		}
	}
}

func FuzzParseSeq(f *testing.F) {
	const folder = "agents/main/chats/telegram-42/"
	for _, s := range []string{
		eventName(folder, 1), eventName(folder, 1<<63-1), folder + "events/x.json",
		folder + "events/ 0000000000000000001.json", folder + "events/1e000000000000000000.json",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		seq, err := parseSeq(folder, name)
		if err != nil {
			return
		}
		// What parses is exactly the name of its number.
		if seq < 1 || eventName(folder, seq) != name {
			t.Fatalf("%q parsed as %d, whose name is %q", name, seq, eventName(folder, seq))
		}
	})
}

func TestParseLease(t *testing.T) {
	until := time.Date(2026, 11, 30, 9, 1, 0, 0, time.UTC)
	for _, tc := range []struct {
		body string
		want store.Lease
	}{
		{`{"holder":"h1","expires":"2026-11-30T09:01:00Z"}` + "\n", store.Lease{Holder: "h1", Expires: until}},
		{`{"holder":"","expires":"2026-11-30T09:01:00Z"}`, store.Lease{Expires: until}},
		{`{"holder":"","expires":"0001-01-01T00:00:00Z"}`, store.Lease{}},
	} {
		got, err := parseLease([]byte(tc.body))
		if err != nil || got.Holder != tc.want.Holder || !got.Expires.Equal(tc.want.Expires) {
			t.Errorf("parse %s: %+v, %v; want %+v", tc.body, got, err, tc.want)
		}
	}
	for _, body := range []string{
		"", "null", "[]", "{", `{"holder":"h1"}`, `{"holder":"h1","expires":"soon"}`,
		`{"holder":"h1","expires":"2026-11-30T09:01:00Z","extra":1}`,
		`{"holder":"h1","expires":"2026-11-30T09:01:00Z"} {}`,
	} {
		if l, err := parseLease([]byte(body)); !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("parse %q: %+v, %v; want ErrCorrupt", body, l, err)
		}
	}
}

func FuzzParseLease(f *testing.F) {
	for _, s := range []string{
		`{"holder":"h1","expires":"2026-11-30T09:01:00.123456789Z"}` + "\n",
		`{"holder":"","expires":"0001-01-01T00:00:00Z"}`, `null`, `{"holder":1}`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseLease(b)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("parse %q: %v, not ErrCorrupt", b, err)
			}
			return
		}
		if l.Holder != "" && l.Expires.IsZero() {
			t.Fatalf("parse %q: a holder with no expiry", b)
		}
		// What parses is written back as a lease that parses the same.
		again, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		l2, err := parseLease(again)
		if err != nil || l2.Holder != l.Holder || !l2.Expires.Equal(l.Expires) {
			t.Fatalf("%q read %+v, written %s, read back %+v, %v", b, l, again, l2, err)
		}
		if strings.ContainsRune(l.Holder, 0) && !strings.Contains(string(again), `\u0000`) {
			t.Fatalf("holder's NUL written raw: %s", again)
		}
	})
}
