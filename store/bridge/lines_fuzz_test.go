package bridge

import (
	"bufio"
	"bytes"
	"errors"
	"testing"

	"github.com/lnk-dev/link/store"
)

// FuzzReadLines proves an answer of events' lines from the bridge, a
// child process or a peer, never panics readLines, is refused as corrupt
// or as a line over store.MaxLine, and that each event it reads is written
// back by store.MarshalLine as a line read as the same event.
func FuzzReadLines(f *testing.F) {
	for _, s := range []string{
		`{"seq":1,"kind":"message","text":"hi"}` + "\n" + `{"seq":2,"kind":"message","text":"yo"}` + "\n",
		`{"seq":1,"kind":"message"}` + "\r\n",
		`{"seq":1,"kind":"message"}`,
		"\n",
		`{"seq":0,"kind":"message"}`,
		`{"seq":1,"kind":"message"} {}`,
		`{"seq":1}`,
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := readLines(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) && !errors.Is(err, bufio.ErrTooLong) {
				t.Fatalf("refused %q, neither corrupt nor too long: %v", b, err)
			}
			return
		}
		for _, e := range es {
			l, err := store.MarshalLine(e)
			if err != nil {
				t.Fatalf("event %+v read from %q not written back: %v", e, b, err)
			}
			again, err := store.ParseLine(l)
			if err != nil {
				t.Fatalf("%s written back, not read: %v", l, err)
			}
			if same, err := sameLine(again, e); err != nil || !same {
				t.Fatalf("%s read back as %+v, was %+v (%v)", l, again, e, err)
			}
		}
	})
}
