package memory_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lnk-dev/link/memory"
)

// One rule for every call's path: relative to the agent's home, "",
// "." and "./" the home's top level, "./" before a path and "/" after a
// folder taken as nothing, and every absolute path refused, "/" too.
func TestPathRule(t *testing.T) {
	ctx := context.Background()
	m, p := newMemory(t, t.TempDir())
	write(t, filepath.Join(p.Files(), "a.md"), "alpha\n")
	names := func(l memory.Listing) []string {
		var out []string
		for _, e := range l.Entries {
			out = append(out, e.Name)
		}
		return out
	}
	top, err := m.List(ctx, "")
	if err != nil || !slices.Contains(names(top), "files") {
		t.Fatalf("list \"\": %v %v", names(top), err)
	}
	for _, name := range []string{".", "./", ".//", "./."} {
		l, err := m.List(ctx, name)
		if err != nil || !slices.Equal(names(l), names(top)) {
			t.Errorf("list %q: %v %v, want %v", name, names(l), err, names(top))
		}
	}
	for _, name := range []string{"files", "files/", "./files", "./files/"} {
		l, err := m.List(ctx, name)
		if err != nil || !slices.Equal(names(l), []string{"files/a.md"}) {
			t.Errorf("list %q: %v %v", name, names(l), err)
		}
	}
	if l, err := m.Read(ctx, "./files/a.md", 1, 1); err != nil || !slices.Equal(l.Text, []string{"alpha"}) {
		t.Errorf("read ./files/a.md: %+v %v", l, err)
	}
	for _, name := range []string{"/", "//", "/files", "/etc/passwd"} {
		if _, err := m.List(ctx, name); !errors.Is(err, memory.ErrOutside) || !strings.Contains(err.Error(), "absolute") {
			t.Errorf("list %q: %v, want refused as absolute", name, err)
		}
		if _, err := m.Read(ctx, name, 1, 1); !errors.Is(err, memory.ErrOutside) {
			t.Errorf("read %q: %v, want refused as absolute", name, err)
		}
	}
	for _, name := range []string{"", ".", "./"} {
		if _, err := m.Read(ctx, name, 1, 1); !errors.Is(err, memory.ErrRefused) || !strings.Contains(err.Error(), "top level") {
			t.Errorf("read %q: %v, want the top level refused as a folder", name, err)
		}
		if _, err := m.Links(ctx, name); !errors.Is(err, memory.ErrRefused) || !strings.Contains(err.Error(), "top level") {
			t.Errorf("links %q: %v", name, err)
		}
	}
}
