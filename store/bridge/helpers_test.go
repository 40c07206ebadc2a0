package bridge_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// mkdirShort makes a folder with a short path, for unix sockets.
func mkdirShort() (string, error) { return os.MkdirTemp("", "lb") }

func removeAll(dir string) { os.RemoveAll(dir) }

func lstat(path string) (fs.FileInfo, error) { return os.Lstat(path) }

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
