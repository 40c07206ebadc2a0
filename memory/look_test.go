package memory_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lnk-dev/link/memory"
	"github.com/lnk-dev/link/store/log"
)

// The next search sees every kind of change to the sources, made after
// the first search looked at them all: a file edited in place (its size
// kept), made, removed, renamed, moved to a new folder, a folder
// renamed, a file that became a link, a conversation begun and one
// written to. On Linux it does so from the kernel's record of what
// changed (inotify), looking at every source only for a folder made,
// removed or renamed among the files.
func TestNextSearchSeesEachChange(t *testing.T) {
	ctx := context.Background()
	m, p := newMemory(t, t.TempDir())
	a := filepath.Join(p.Files(), "trips", "a.md")
	write(t, a, "the okapi sleeps\n")
	write(t, filepath.Join(p.Files(), "trips", "b.md"), "the narwhal swims\n")
	lg := log.Open(p.Chats())
	say(t, p, lg, "telegram:1", "the quetzal flew by", "Noted.")
	if got := sources(search(t, m, "okapi narwhal quetzal")); len(got) != 3 {
		t.Fatalf("first search: %v", got)
	}
	looks, watched := memory.FullLooks(m)
	if runtime.GOOS == "linux" && !watched {
		t.Fatal("no watcher on Linux")
	}
	find := func(q string, want ...string) {
		t.Helper()
		got := sources(search(t, m, q))
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%q: %v, want %v", q, got, want)
		}
	}
	// Edited in place, the same size: the old word gone, the new found.
	f, err := os.OpenFile(a, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("tapir"), 4); err != nil {
		t.Fatal(err)
	}
	f.Close()
	find("okapi")
	find("tapir", "files/trips/a.md:1")
	// Made.
	write(t, filepath.Join(p.Files(), "trips", "c.md"), "the axolotl waits\n")
	find("axolotl", "files/trips/c.md:1")
	// Renamed.
	if err := os.Rename(filepath.Join(p.Files(), "trips", "c.md"), filepath.Join(p.Files(), "trips", "d.md")); err != nil {
		t.Fatal(err)
	}
	find("axolotl", "files/trips/d.md:1")
	// Removed.
	if err := os.Remove(filepath.Join(p.Files(), "trips", "b.md")); err != nil {
		t.Fatal(err)
	}
	find("narwhal")
	// A file replaced by a link (never followed).
	if err := os.Rename(filepath.Join(p.Files(), "trips", "d.md"), filepath.Join(p.Root, "outside.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(p.Root, "outside.md"), filepath.Join(p.Files(), "trips", "d.md")); err != nil {
		t.Fatal(err)
	}
	find("axolotl")
	// A conversation written to, and one begun.
	say(t, p, lg, "telegram:1", "a pangolin too", "Noted.")
	find("pangolin", "chats/telegram:1:11")
	say(t, p, lg, "telegram:2", "the kakapo calls", "Noted.")
	find("kakapo", "chats/telegram:2:1")
	if n, _ := memory.FullLooks(m); runtime.GOOS == "linux" && n != looks {
		t.Fatalf("%d looks at every source for changes to files and conversations", n-looks)
	}
	// A folder made with a file in it, then renamed: every source looked
	// at again.
	write(t, filepath.Join(p.Files(), "new", "e.md"), "the quokka smiles\n")
	find("quokka", "files/new/e.md:1")
	if err := os.Rename(filepath.Join(p.Files(), "new"), filepath.Join(p.Files(), "old")); err != nil {
		t.Fatal(err)
	}
	find("quokka", "files/old/e.md:1")
	// Its file edited after the rename, seen through the watch of the
	// folder under its new name.
	write(t, filepath.Join(p.Files(), "old", "e.md"), "the dugong floats\n")
	find("quokka")
	find("dugong", "files/old/e.md:1")
	// The notes, and the whole files folder removed.
	if _, err := m.Remember(ctx, "the wombat's name is Kev", nil); err != nil {
		t.Fatal(err)
	}
	find("wombat", "memory/notes.md:1")
	if err := os.RemoveAll(p.Files()); err != nil {
		t.Fatal(err)
	}
	find("tapir dugong")
}
