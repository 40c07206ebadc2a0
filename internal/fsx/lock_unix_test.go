//go:build unix

package fsx

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A folder renamed aside, another put in its place, while its lock was
// waited for: the lock had is the new folder's, and the old one's is let
// go, so a writer never writes into the new folder holding the old lock.
func TestLockDirFollowsFolderReplaced(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "c")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir, os.O_RDONLY, 0) // opened before the rename, as a waiter's is
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(parent, ".old-c")
	if err := os.Rename(dir, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockDir(context.Background(), d, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if free(t, dir) {
		t.Fatal("the folder now at the path is not locked")
	}
	if !free(t, old) {
		t.Fatal("the folder renamed aside is still locked")
	}
}

// A folder renamed aside with none in its place: the lock is refused.
func TestLockDirFolderGone(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "c")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, filepath.Join(parent, ".old-c")); err != nil {
		t.Fatal(err)
	}
	if unlock, err := lockDir(context.Background(), d, dir); err == nil {
		unlock()
		t.Fatal("locked a folder no longer there")
	}
}

// free says whether dir's lock can be had at once (and lets it go).
func free(t *testing.T, dir string) bool {
	t.Helper()
	f, err := Open(dir, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := lock(f, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
