package store_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

func FuzzParseTools(f *testing.F) {
	for _, s := range []string{`[]`, `["memory__search","file__read"]`, `null`, `["../x"]`, `[1]`, `{"a":1}`, `["a","a"]`, ``, `[""]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tools, err := store.ParseTools(b)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("refusal isn't ErrCorrupt: %v", err)
			}
			return
		}
		if tools == nil || len(*tools) > contract.MaxTools {
			t.Fatalf("accepted %v", tools)
		}
		for _, name := range *tools {
			if contract.CheckToolName(name) != nil {
				t.Fatalf("accepted the name %q", name)
			}
		}
		// What it reads, written again, reads the same.
		again, _ := json.Marshal(*tools)
		back, err := store.ParseTools(again)
		if err != nil || strings.Join(*back, ",") != strings.Join(*tools, ",") {
			t.Fatalf("round trip: %v, %v", back, err)
		}
	})
}

// Every thread the contract takes has one folder, which reads back as it,
// and a folder name reads as a thread only when it is that thread's.
func FuzzFolderThread(f *testing.F) {
	for _, s := range []string{"default", "telegram-42", "telegram--1001234", "telegram--100.7", "slack-C0123ABC.1700000000.000100",
		"link-a-b", "link-notes", "discord-1", "signal-15551234567", ".convert-telegram-1", ".old-link-x", "events.sqlite", "telegram-4 2", "-", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		thread, err := contract.FolderThread(name)
		if err == nil {
			back, err := contract.ThreadFolder(thread)
			if err != nil || back != name {
				t.Fatalf("folder %q reads as %q, whose folder is %q (%v)", name, thread, back, err)
			}
			if strings.HasPrefix(name, ".") || strings.ContainsAny(name, "/\\\x00") || name == ".." {
				t.Fatalf("folder %q names a thread", name)
			}
		}
		// Read as a thread id, the same holds the other way.
		if folder, err := contract.ThreadFolder(name); err == nil {
			back, err := contract.FolderThread(folder)
			if err != nil || back != name {
				t.Fatalf("thread %q has folder %q, which reads as %q (%v)", name, folder, back, err)
			}
			if filepath.Base(folder) != folder || strings.HasPrefix(folder, ".") {
				t.Fatalf("thread %q has folder %q", name, folder)
			}
		}
	})
}

// The copy's end, read from whatever a file holds, names an answer only
// when the file ends with a whole trailer.
func FuzzCopyEnd(f *testing.F) {
	for _, s := range []string{"", "## Agent\n\nhi\n\n<!-- seq 12 -->\n\n", "<!-- seq 0 -->\n\n", "<!-- seq 99999999999999999999 -->\n\n",
		"x<!-- seq 3 -->\n", "<!-- seq -3 -->\n\n", "<!-- seq 7 -->\n\n\n"} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "chat.md")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		seq, ok, err := store.CopyEnd(path)
		if err != nil {
			t.Fatal(err)
		}
		if ok && (seq < 1 || !strings.HasSuffix(string(b), " -->\n\n")) {
			t.Fatalf("%q ends with answer %d", b, seq)
		}
		if !ok && seq != 0 {
			t.Fatalf("not ended, yet %d", seq)
		}
	})
}
