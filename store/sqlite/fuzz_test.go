package sqlite

import (
	"context"
	"errors"
	"testing"

	"github.com/lnk-dev/link/store"
)

// FuzzReadBody stores any bytes as a body, as a damaged or foreign file
// may hold, and reads them back: a read gives the event of the row's
// number or ErrCorrupt, never another number's event, never a panic.
func FuzzReadBody(f *testing.F) {
	for _, seed := range []string{
		`{"seq":1,"time":"2026-11-30T09:00:00Z","kind":"message","text":"hi"}` + "\n",
		`{"seq":1,"kind":"answer","usage":{"in":1,"out":2}}`,
		`{"seq":2,"kind":"message"}`,
		`{"seq":1,"kind":"message"}{"seq":1,"kind":"message"}`,
		`{"seq":1}`,
		`{"seq":1,"kind":"message","time":"yesterday"}`,
		`{"seq":-1,"kind":"message"}`,
		`null`,
		"",
		"\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	d, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { d.Close() })
	ctx := context.Background()
	if err := d.Append(ctx, "link:fuzz", store.Event{Seq: 1, Kind: store.KindMessage}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := d.w.Exec(`UPDATE events SET body = ? WHERE thread = 'link:fuzz' AND seq = 1`, body); err != nil {
			t.Fatal(err)
		}
		es, rerr := d.Read(ctx, "link:fuzz", 1)
		ls, lerr := d.Latest(ctx, "link:fuzz", 1)
		if (rerr == nil) != (lerr == nil) {
			t.Fatalf("read: %v; latest: %v", rerr, lerr)
		}
		if rerr != nil {
			if !errors.Is(rerr, store.ErrCorrupt) || !errors.Is(lerr, store.ErrCorrupt) {
				t.Fatalf("read: %v; latest: %v; want ErrCorrupt", rerr, lerr)
			}
			return
		}
		if len(es) != 1 || es[0].Seq != 1 || es[0].Kind == "" || len(ls) != 1 || !equalEvent(es[0], ls[0]) {
			t.Fatalf("read %+v, latest %+v: want event 1", es, ls)
		}
	})
}

func equalEvent(a, b store.Event) bool {
	x, err1 := store.MarshalLine(a)
	y, err2 := store.MarshalLine(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
