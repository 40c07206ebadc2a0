package home

import (
	"fmt"
	"path/filepath"
	"testing"
)

// A pass's first folders are kept without a map (Look.few), the rest in
// one; each is looked at once in the pass, wherever it is kept.
func TestLookKeepsFewFoldersWithoutMap(t *testing.T) {
	root := t.TempDir()
	l := (&Misses{}).look()
	var dirs []string
	for i := range len(l.few) + 2 {
		dirs = append(dirs, filepath.Join(root, fmt.Sprint("d", i)))
	}
	first := map[string]looked{}
	for i, d := range dirs {
		got, before := l.look(d)
		if before {
			t.Fatalf("look(%s) said looked at before, on its first look", d)
		}
		first[d] = got
		if i < len(l.few) && l.folder != nil {
			t.Fatalf("after %d folders a map was made; the first %d are kept without", i+1, len(l.few))
		}
	}
	if len(l.folder) != 2 {
		t.Fatalf("%d folders in the map, want 2 past the first %d", len(l.folder), len(l.few))
	}
	for _, d := range dirs {
		got, before := l.look(d)
		if !before || got != first[d] {
			t.Errorf("look(%s) again = %+v, %v; want the first look, before", d, got, before)
		}
	}
}
