package log_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/storetest"
)

// FuzzEventsFile reads any bytes as a conversation's events.jsonl, and
// each as one line: never a panic, either events or an error that wraps
// ErrCorrupt, and every way of reading agrees with every other.
func FuzzEventsFile(f *testing.F) {
	good := lines(f, storetest.Events(7, "a"))
	f.Add(good)
	f.Add(append(good[:len(good)-1:len(good)-1], ` {"seq":8`...))
	f.Add([]byte("{\"seq\":1,\"time\":\"2026-11-30T09:15:00Z\",\"kind\":\"message\",\"text\":\"hi\"}\n"))
	f.Add([]byte("{\"seq\":1,\"kind\":\"message\"}\n{\"seq\":3,\"kind\":\"answer\"}\n"))
	f.Add([]byte("{\"seq\":0,\"kind\":\"message\"}\n"))
	f.Add([]byte("{\"seq\":1,\"kind\":\"message\"} {\"seq\":2}\n"))
	f.Add([]byte("{\"seq\":1,\"kind\":\"message\",\"time\":\"yesterday\"}\n"))
	f.Add([]byte("\n\n"))
	f.Add([]byte("\xff\xfe\x00"))
	// One folder for every input, each written over the last, so an input
	// costs its reads rather than a folder's making and removal.
	d, path := withFile(f, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if e, err := store.ParseLine(data); err == nil && (e.Seq < 1 || e.Kind == "") {
			t.Fatalf("parse line accepted %+v", e)
		} else if err != nil && !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("parse line: %v, not ErrCorrupt", err)
		}
		all, err := d.Read(ctx, "default", 1)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("read: %v, not ErrCorrupt", err)
			}
		} else {
			for i, e := range all {
				if e.Seq != int64(i+1) {
					t.Fatalf("read gave event %d at %d", e.Seq, i)
				}
			}
		}
		for _, n := range []int{1, 3, 1000} {
			got, lerr := d.Latest(ctx, "default", n)
			if lerr != nil && !errors.Is(lerr, store.ErrCorrupt) {
				t.Fatalf("latest %d: %v, not ErrCorrupt", n, lerr)
			}
			if err == nil {
				// What reads whole reads in part.
				if lerr != nil {
					t.Fatalf("read whole, but latest %d: %v", n, lerr)
				}
				storetest.Same(t, "latest", got, all[max(0, len(all)-n):])
			}
		}
		from, ferr := d.Read(ctx, "default", 2)
		if ferr != nil && !errors.Is(ferr, store.ErrCorrupt) {
			t.Fatalf("read from 2: %v, not ErrCorrupt", ferr)
		}
		if err == nil {
			if ferr != nil {
				t.Fatalf("read whole, but from 2: %v", ferr)
			}
			storetest.Same(t, "read from 2", from, all[min(1, len(all)):])
		}
	})
}
