package router_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/internal/fixture"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
	"github.com/lnk-dev/link/store/sqlite"
)

// The router remembers a begun conversation's kind while its folder is
// unchanged, and sees each change the listing would: its events emptied,
// a marker made or removed, the folder replaced by a link.
func TestRouterKindRemembered(t *testing.T) {
	defer router.MoveKindClock(func() time.Time { return time.Now().Add(time.Hour) })()
	p := fixture.Agent(t)
	ds := fixture.Drivers(t, p)
	const th = "telegram:71"
	fixture.AppendAll(t, ds[log.Name], th, fixture.Conversation(1, "a"))
	r, err := router.New(p, sqlite.Name, ds)
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
	kind(log.Name)
	if runtime.GOOS == "linux" && !router.KindRemembered(dir) {
		t.Fatal("a trusted log's kind isn't remembered")
	}
	// Emptied (a first event's line cut off): not begun, so the spec's.
	events := filepath.Join(dir, "events.jsonl")
	if err := os.Truncate(events, 0); err != nil {
		t.Fatal(err)
	}
	kind(sqlite.Name)
	fixture.AppendAll(t, ds[log.Name], th, fixture.Conversation(1, "b"))
	kind(log.Name)
	marker := filepath.Join(dir, driver.MarkerPrefix+sqlite.Name)
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	kind(sqlite.Name)
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	kind(log.Name)
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
	if router.KindRemembered(dir) {
		t.Fatal("a link's kind is remembered")
	}
}

// A folder changed within foldertime.Wait is listed each time, never
// remembered.
func TestRouterKindUntrusted(t *testing.T) {
	p := fixture.Agent(t)
	ds := fixture.Drivers(t, p)
	const th = "telegram:72"
	fixture.AppendAll(t, ds[log.Name], th, fixture.Conversation(1, "a"))
	r := fixture.Router(t, p, log.Name)
	if got, err := r.Kind(th); got != log.Name || err != nil {
		t.Fatalf("kind %q, %v", got, err)
	}
	dir, _ := p.Conversation(th)
	if router.KindRemembered(dir) {
		t.Fatal("a folder made just now had its kind remembered")
	}
}
