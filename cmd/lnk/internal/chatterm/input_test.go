package chatterm

import (
	"os"
	"path/filepath"
	"testing"
)

// The history file is made for its owner alone, one found wider is made
// so, and a link in its place is refused.
func TestKeepHistory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agents", "main", "chat-history.jsonl")
	if err := keepHistory(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("made %v, %v", st.Mode(), err)
	}
	os.Chmod(path, 0o644)
	if err := keepHistory(path); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("left %v", st.Mode())
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(path, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := keepHistory(link); err == nil {
		t.Fatal("a link was taken as the history")
	}
	if _, err := OpenInput(link); err == nil {
		t.Fatal("OpenInput took a link as the history")
	}
}
