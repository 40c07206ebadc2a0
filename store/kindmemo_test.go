package store_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/internal/fixture"
	"github.com/lnk-dev/link/store/sqlite"
)

// The router remembers a begun conversation's kind while its folder is
// unchanged, and sees each change the listing would: its events emptied,
// a marker made or removed, the folder replaced by a link.
func TestRouterKindRemembered(t *testing.T) {
	defer store.MoveKindClock(func() time.Time { return time.Now().Add(time.Hour) })()
	p := fixture.Agent(t)
	ds := fixture.Drivers(t, p)
	const th = "telegram:71"
	fixture.AppendAll(t, ds[store.Log], th, fixture.Conversation(1, "a"))
	r, err := store.NewRouter(p, sqlite.Name, ds)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := p.Conversation(th)
	kind := func(want string) {
		t.Helper()
		for range 2 { // listed, then remembered
			if got, err := r.Kind(th); got != want || err != nil {
				t.Fatalf("kind %q, %v; want %q", got, err, want)
			}
		}
	}
	kind(store.Log)
	if runtime.GOOS == "linux" && !store.KindRemembered(dir) {
		t.Fatal("a settled log's kind isn't remembered")
	}
	// Emptied (a first event's line cut off): not begun, so the spec's.
	events := filepath.Join(dir, "events.jsonl")
	if err := os.Truncate(events, 0); err != nil {
		t.Fatal(err)
	}
	kind(sqlite.Name)
	fixture.AppendAll(t, ds[store.Log], th, fixture.Conversation(1, "b"))
	kind(store.Log)
	marker := filepath.Join(dir, store.MarkerPrefix+sqlite.Name)
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	kind(sqlite.Name)
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	kind(store.Log)
	// The folder moved away and a link to it put in its place: refused.
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir+".old", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Kind(th); err == nil {
		t.Fatal("a conversation's folder that is a link was read")
	}
	if store.KindRemembered(dir) {
		t.Fatal("a link's kind is remembered")
	}
}

// A folder changed within the settle is listed each time, never
// remembered.
func TestRouterKindUnsettled(t *testing.T) {
	p := fixture.Agent(t)
	ds := fixture.Drivers(t, p)
	const th = "telegram:72"
	fixture.AppendAll(t, ds[store.Log], th, fixture.Conversation(1, "a"))
	r := fixture.Router(t, p, store.Log)
	if got, err := r.Kind(th); got != store.Log || err != nil {
		t.Fatalf("kind %q, %v", got, err)
	}
	dir, _ := p.Conversation(th)
	if store.KindRemembered(dir) {
		t.Fatal("a folder made just now had its kind remembered")
	}
}
