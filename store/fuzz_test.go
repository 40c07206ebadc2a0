package store_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/contract"
)

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
