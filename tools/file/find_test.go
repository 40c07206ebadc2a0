package file

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindNames(t *testing.T) {
	eachWay(t, func(t *testing.T) {
		w, dir := space(t)
		for _, name := range []string{"b.md", "a.md", "a/z.md", "a/y.go", "src/main.go", "src/lib/util.go", ".hidden/x.md", "node_modules/m.md", "build/out.go", "keep.log", "drop.log"} {
			put(t, filepath.Join(dir, filepath.FromSlash(name)), "text of "+name+"\n")
		}
		put(t, filepath.Join(dir, ".gitignore"), "# made by the build\nnode_modules/\n/build\n*.log\n!keep.log\n")
		put(t, filepath.Join(dir, "src", ".gitignore"), "lib/\n")
		ctx := context.Background()
		names := func(q Query) string {
			t.Helper()
			f, err := w.Find(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return strings.Join(f.Files, " ")
		}
		if got := names(Query{}); got != "a/y.go a/z.md a.md b.md keep.log src/main.go" {
			t.Fatalf("every name: %s", got)
		}
		if got := names(Query{Glob: "*.md"}); got != "a/z.md a.md b.md" {
			t.Fatalf("*.md: %s", got)
		}
		if got := names(Query{Glob: "src/**/*.go", Ignored: true}); got != "src/lib/util.go src/main.go" {
			t.Fatalf("src/**/*.go, ignored too: %s", got)
		}
		if got := names(Query{Path: "src", Glob: "*.go"}); got != "src/main.go" {
			t.Fatalf("in src: %s", got)
		}
		if got := names(Query{Glob: "*.md", Hidden: true}); got != ".hidden/x.md a/z.md a.md b.md" {
			t.Fatalf("hidden too: %s", got)
		}
		f, err := w.Find(ctx, Query{Glob: "*.md", Limit: 2})
		if err != nil || strings.Join(f.Files, " ") != "a/z.md a.md" || !f.More {
			t.Fatalf("limit 2: %+v %v", f, err)
		}
		if !strings.Contains(FormatFound(f, false), "more were found than shown") {
			t.Fatal(FormatFound(f, false))
		}
		_, err = w.Find(ctx, Query{Glob: "[a"})
		mustRefuse(t, err, "is not a glob")
		_, err = w.Find(ctx, Query{Pattern: "a("})
		mustRefuse(t, err, "not a regular expression")
		_, err = w.Find(ctx, Query{Path: "a.md"})
		if err == nil {
			t.Fatal("a file found in as a folder")
		}
	})
}

func TestFindLines(t *testing.T) {
	w, dir := space(t)
	put(t, filepath.Join(dir, "notes", "b.md"), "nothing\nTODO: two\n")
	put(t, filepath.Join(dir, "notes", "a.md"), "TODO: one\nno\ntodo: three\r\n")
	put(t, filepath.Join(dir, "img.png"), "TODO\x00binary")
	put(t, filepath.Join(dir, "long.txt"), "TODO "+strings.Repeat("x", 1000)+"\n")
	ctx := context.Background()
	f, err := w.Find(ctx, Query{Pattern: "(?i)^todo"})
	if err != nil {
		t.Fatal(err)
	}
	got := FormatFound(f, true)
	want := "long.txt:1: TODO " + strings.Repeat("x", maxMatchBytes-5) + "\nnotes/a.md:1: TODO: one\nnotes/a.md:3: todo: three\nnotes/b.md:2: TODO: two\n(1 binary files not searched)\n"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	f, err = w.Find(ctx, Query{Pattern: "TODO", Glob: "*.md", Limit: 2})
	if err != nil || len(f.Matches) != 2 || f.More || f.Matches[1].Path != "notes/b.md" {
		t.Fatalf("limit 2: %+v %v", f, err)
	}
	f, err = w.Find(ctx, Query{Pattern: "TODO", Glob: "*.md", Limit: 1})
	if err != nil || len(f.Matches) != 1 || !f.More {
		t.Fatalf("limit 1: %+v %v", f, err)
	}
	f, err = w.Find(ctx, Query{Pattern: "absent"})
	if err != nil || !strings.HasPrefix(FormatFound(f, true), "No line matches, in 4 files searched") {
		t.Fatalf("%+v %v", f, err)
	}
}

// Lines found in many files, more than a batch, come in order and stop
// at the limit.
func TestFindLinesInOrder(t *testing.T) {
	w, dir := space(t)
	for i := range 700 {
		put(t, filepath.Join(dir, fmt.Sprintf("d%d", i%7), fmt.Sprintf("f%03d.txt", i)), fmt.Sprintf("x\nmatch %d\n", i))
	}
	f, err := w.Find(context.Background(), Query{Pattern: "^match", Limit: 650})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Matches) != 650 || !f.More {
		t.Fatalf("%d lines, more %v", len(f.Matches), f.More)
	}
	for i := 1; i < len(f.Matches); i++ {
		if f.Matches[i-1].Path >= f.Matches[i].Path {
			t.Fatalf("out of order: %s before %s", f.Matches[i-1].Path, f.Matches[i].Path)
		}
	}
}

// A find looks at MaxEntries files and folders at most, a folder holding
// more among them: it stops there, saying so.
func TestFindBounded(t *testing.T) {
	w, dir := space(t)
	for i := range 30 {
		put(t, filepath.Join(dir, "many", fmt.Sprintf("f%02d.txt", i)), "x\n")
	}
	put(t, filepath.Join(dir, "a.txt"), "x\n")
	defer func(n int) { maxEntries = n }(maxEntries)
	maxEntries = 20
	f, err := w.Find(context.Background(), Query{Limit: MaxFound})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Files) != 19 || f.Files[0] != "a.txt" || !strings.Contains(f.Stopped, "many holds more than the 20 files and folders") {
		t.Fatalf("%d files, stopped %q", len(f.Files), f.Stopped)
	}
	maxEntries = 10
	f, err = w.Find(context.Background(), Query{Pattern: "x", Limit: MaxFound})
	if err != nil || len(f.Matches) != 9 || !strings.Contains(FormatFound(f, true), "stopped: ") {
		t.Fatalf("%+v %v", f, err)
	}
}
