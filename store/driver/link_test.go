package driver_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store/driver"
)

// Mark refuses a conversation folder, or a marker, that is a symbolic
// link, and writes nothing where it points.
func TestMarkRefusesLinks(t *testing.T) {
	elsewhere := t.TempDir()
	dir := filepath.Join(t.TempDir(), "conv")
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	if err := driver.Mark(dir, "sqlite"); !errors.Is(err, fsx.ErrSymlink) {
		t.Fatalf("a linked folder marked: %v", err)
	}
	dir2 := filepath.Join(t.TempDir(), "conv")
	if err := os.MkdirAll(dir2, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "m"), filepath.Join(dir2, driver.MarkerPrefix+"sqlite")); err != nil {
		t.Fatal(err)
	}
	if err := driver.Mark(dir2, "sqlite"); !errors.Is(err, fsx.ErrSymlink) {
		t.Fatalf("a linked marker written: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("written where the links point: %v", entries)
	}
}
