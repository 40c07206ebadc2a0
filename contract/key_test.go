package contract

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadKeyFile: a key file is read as ParseKey reads it, a trailing
// newline not part of the key; a file longer than a key and its newline
// is refused naming the bound; none is
// fs.ErrNotExist; a link to the file is followed (the operator's).
func TestReadKeyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	long := strings.Repeat("k", MaxKey)
	for _, c := range []struct{ text, want string }{
		{"secret-key-0123456789\n", "secret-key-0123456789"},
		{long + "\r\n", long},
	} {
		key, err := ReadKeyFile(write("key", c.text))
		if err != nil || string(key) != c.want {
			t.Errorf("%.20q...: %.20q, %v; want %.20q", c.text, key, err, c.want)
		}
	}
	for _, text := range []string{long + "k\n", long + "\r\nmore", strings.Repeat("k", 64<<20)} {
		if key, err := ReadKeyFile(write("long", text)); err == nil || !strings.Contains(err.Error(), "at most") {
			t.Errorf("a file of %d bytes: %d bytes of key, %v; want refused at the bound", len(text), len(key), err)
		}
	}
	if _, err := ReadKeyFile(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no file: %v, want fs.ErrNotExist", err)
	}
	link := filepath.Join(dir, "mounted")
	if err := os.Symlink(write("real", "from-a-secret-mount\n"), link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if key, err := ReadKeyFile(link); err != nil || string(key) != "from-a-secret-mount" {
		t.Errorf("a link to the key file: %q, %v", key, err)
	}
}
