package file

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every way out of the workspace is refused: "..", an absolute path, a
// link to a file outside, a link to a folder outside on the way, for a
// read, a write, a replace and a find; a link that stays inside is
// followed. Nothing outside is read or touched.
func TestEscapesRefused(t *testing.T) {
	eachWay(t, func(t *testing.T) {
		w, dir := space(t)
		ctx := context.Background()
		outside := filepath.Join(filepath.Dir(dir), "outside")
		before := snapshot(t, outside)
		if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "secret-link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../outside/secret.txt", filepath.Join(dir, "rel-link")); err != nil {
			t.Fatal(err)
		}
		put(t, filepath.Join(dir, "in", "real.md"), "inside\n")
		os.Symlink("loop-b", filepath.Join(dir, "loop-a"))
		os.Symlink("loop-a", filepath.Join(dir, "loop-b"))
		_, err := w.Read(ctx, "loop-a", 0, 0)
		if err == nil || !IsRefusal(err) || strings.Contains(err.Error(), "outside") {
			t.Fatalf("a loop of links: %v", err)
		}
		if err := os.Symlink("in/real.md", filepath.Join(dir, "in-link")); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"../outside/secret.txt", "secret-link", "out/secret.txt", "rel-link", "in/../../outside/secret.txt"} {
			_, err := w.Read(ctx, p, 0, 0)
			mustRefuse(t, err, "outside the workspace")
			_, err = w.Replace(ctx, p, "secret", "mine")
			if err == nil || !IsRefusal(err) {
				t.Fatalf("replace %s: %v", p, err)
			}
		}
		for _, p := range []string{"../outside/new.txt", "out/new.txt", "out/secret.txt"} {
			_, err := w.Write(ctx, p, []byte("x"))
			mustRefuse(t, err, "outside the workspace")
		}
		_, err = w.Write(ctx, "secret-link", []byte("x"))
		mustRefuse(t, err, "a symbolic link")
		_, err = w.Find(ctx, Query{Path: "out", Glob: "*"})
		mustRefuse(t, err, "outside the workspace")
		_, err = w.Find(ctx, Query{Path: "..", Glob: "*"})
		mustRefuse(t, err, "outside the workspace")
		f, err := w.Find(ctx, Query{Pattern: "secret", Hidden: true})
		if err != nil || len(f.Matches) != 0 {
			t.Fatalf("find followed a link out: %+v %v", f, err)
		}
		l, err := w.Read(ctx, "in-link", 0, 0)
		if err != nil || l.Text[0] != "inside" {
			t.Fatalf("a link inside: %+v %v", l, err)
		}
		if after := snapshot(t, outside); after != before {
			t.Fatalf("outside changed:\n%s\n%s", before, after)
		}
		if _, err := os.Lstat(filepath.Join(dir, "secret-link")); err != nil {
			t.Fatal("the link was replaced:", err)
		}
	})
}

// The refusal is the kernel's (or os.Root's) lookup, not a check of the
// path's text: a folder's open of "..", an absolute path and a link out,
// given past CheckPath, is refused as outside.
func TestEscapeRefusedByLookup(t *testing.T) {
	eachWay(t, func(t *testing.T) {
		_, dir := space(t)
		outside := filepath.Join(filepath.Dir(dir), "outside")
		os.Symlink(outside, filepath.Join(dir, "out"))
		root, err := openRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer root.close()
		for _, p := range []string{"../outside/secret.txt", filepath.Join(outside, "secret.txt"), "out/secret.txt"} {
			f, err := root.openFile(p)
			if !errors.Is(err, errOutside) {
				if f != nil {
					f.Close()
				}
				t.Fatalf("open %s: %v, not refused as outside", p, err)
			}
		}
		if _, err := root.openFolder("out", true); !errors.Is(err, errOutside) {
			t.Fatalf("a folder through a link out: %v", err)
		}
	})
}

// No answer names a path of the machine.
func TestNoMachinePath(t *testing.T) {
	w, dir := space(t)
	ctx := context.Background()
	os.Symlink("/etc/passwd", filepath.Join(dir, "pw"))
	var said []string
	for _, p := range []string{"missing", "pw", "../x", "a/b/../../../x"} {
		_, err := w.Read(ctx, p, 0, 0)
		said = append(said, err.Error())
		_, err = w.Replace(ctx, p, "a", "b")
		said = append(said, err.Error())
		if _, err = w.Write(ctx, p+"/y", []byte("x")); err != nil {
			said = append(said, err.Error())
		}
	}
	for _, s := range said {
		if strings.Contains(s, dir) || strings.Contains(s, filepath.Dir(dir)) || strings.Contains(s, "/etc") {
			t.Fatalf("%q names a path of the machine", s)
		}
	}
}

// snapshot is every file under dir with its content, as one text.
func snapshot(tb testing.TB, dir string) string {
	tb.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.Mode().String() + " " + fi.ModTime().String() + "\n")
		if fi.Mode().IsRegular() {
			b.WriteString(get(tb, p))
		}
		return nil
	})
	return b.String()
}
