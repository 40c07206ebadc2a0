package memory_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A wiki link by name alone names one file of those so named, the
// nearest the file linking (its own folder's, then below it, then
// above), and only that one has it as a backlink.
func TestWikiLinkNearest(t *testing.T) {
	ctx := context.Background()
	m, p := newMemory(t, t.TempDir())
	for name, text := range map[string]string{
		"a/Ideas.md":       "ideas of a\n",
		"b/Ideas.md":       "ideas of b\n",
		"b/deep/Ideas.md":  "ideas deeper\n",
		"a/page.md":        "see [[Ideas]]\n",
		"b/page.md":        "see [[ideas]]\n",
		"c/page.md":        "see [[Ideas]]\n",
		"b/deep/x/page.md": "see [[Ideas]]\n",
	} {
		write(t, filepath.Join(p.Files(), filepath.FromSlash(name)), text)
	}
	out := func(name string) string {
		t.Helper()
		l, err := m.Links(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return l.Out[0].Resolved
	}
	in := func(name string) string {
		t.Helper()
		l, err := m.Links(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		var from []string
		for _, b := range l.In {
			from = append(from, fmt.Sprintf("%s:%d", b.From, b.Line))
		}
		return strings.Join(from, " ")
	}
	for from, want := range map[string]string{
		"files/a/page.md":        "files/a/Ideas.md",
		"files/b/page.md":        "files/b/Ideas.md",
		"files/c/page.md":        "files/a/Ideas.md", // none nearer: the fewest folders, then the first
		"files/b/deep/x/page.md": "files/b/deep/Ideas.md",
	} {
		if got := out(from); got != want {
			t.Errorf("[[Ideas]] in %s names %s, want %s", from, got, want)
		}
	}
	for name, want := range map[string]string{
		"files/a/Ideas.md":      "files/a/page.md:1 files/c/page.md:1",
		"files/b/Ideas.md":      "files/b/page.md:1",
		"files/b/deep/Ideas.md": "files/b/deep/x/page.md:1",
	} {
		if got := in(name); got != want {
			t.Errorf("backlinks of %s: %s, want %s", name, got, want)
		}
	}
}
