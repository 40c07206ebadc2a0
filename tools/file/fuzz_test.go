package file

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// A path a call names is refused naming its rule, or read beneath the
// workspace: never the file outside it, whatever the path.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"notes/a.md", "../outside/secret.txt", "/etc/passwd", "a\x00b", "in/../../outside/secret.txt", "./in/x", "out/secret.txt", "a//b", "C:\\x", "", "..", "."} {
		f.Add(s)
	}
	w, dir := space(f)
	put(f, filepath.Join(dir, "in", "x"), "inside\n")
	os.Symlink(filepath.Join(filepath.Dir(dir), "outside"), filepath.Join(dir, "out"))
	f.Fuzz(func(t *testing.T, p string) {
		clean, err := CheckPath(p)
		if err != nil {
			if !IsRefusal(err) {
				t.Fatalf("%q: %v, not a refusal", p, err)
			}
			return
		}
		if clean == "" || path.IsAbs(clean) || strings.IndexByte(clean, 0) >= 0 || clean != path.Clean(clean) {
			t.Fatalf("%q passed as %q", p, clean)
		}
		l, err := w.Read(context.Background(), p, 0, 0)
		if err == nil && strings.Contains(strings.Join(l.Text, "\n"), "the secret") {
			t.Fatalf("%q read the file outside", p)
		}
		if err != nil && strings.Contains(err.Error(), dir) {
			t.Fatalf("%q: %v names the machine's path", p, err)
		}
	})
}

// A glob is refused naming its rule, or one doublestar matches with.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"*.md", "src/**/*.go", "{a,b}/[x-z]?", "[", "\\", "**", "a/**/b/**", "./x", "{{{"} {
		f.Add(s, "src/lib/a.go")
	}
	f.Fuzz(func(t *testing.T, g, name string) {
		ok, err := CheckGlob(g)
		if err != nil {
			if !IsRefusal(err) {
				t.Fatalf("%q: %v", g, err)
			}
			return
		}
		wk := &walker{glob: ok, base: "."}
		wk.matches(name, path.Base(name))
		if ok != "" && !doublestar.ValidatePattern(ok) {
			t.Fatalf("%q passed as %q, not a glob", g, ok)
		}
	})
}

// A read of any file, from any line, any number of lines, gives at most
// what it asked and its bounds allow, each line valid UTF-8 (or the file
// said binary), or a refusal.
func FuzzReadRange(f *testing.F) {
	f.Add([]byte("one\ntwo\r\nthree"), 2, 1)
	f.Add([]byte("\xff\xfe"), 0, 0)
	f.Add([]byte(strings.Repeat("x", 3000)+"\n"), 1, -1)
	f.Add([]byte(""), 5, 5)
	f.Add([]byte("é\nè\n"), -3, 100000)
	w, dir := space(f)
	name := filepath.Join(dir, "f.txt")
	f.Fuzz(func(t *testing.T, content []byte, from, n int) {
		if err := os.WriteFile(name, content, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := w.Read(context.Background(), "f.txt", from, n)
		if err != nil {
			if !IsRefusal(err) {
				t.Fatalf("from %d, %d lines: %v", from, n, err)
			}
			return
		}
		if l.Binary {
			if len(l.Text) != 0 {
				t.Fatal("a binary file's text given")
			}
			return
		}
		want := n
		if want == 0 {
			want = DefaultLines
		}
		size := 0
		for _, s := range l.Text {
			size += len(s) + 1
			if len(s) > MaxLineBytes || !utf8.ValidString(s) || strings.ContainsRune(s, '\n') {
				t.Fatalf("line %q", s)
			}
		}
		if len(l.Text) > min(want, MaxLines) || size > MaxReadBytes+MaxLineBytes+1 {
			t.Fatalf("%d lines, %d bytes, for from %d, %d lines", len(l.Text), size, from, n)
		}
		if l.Total >= 0 && l.From+len(l.Text)-1 > l.Total {
			t.Fatalf("lines %d+%d of %d", l.From, len(l.Text), l.Total)
		}
		FormatLines(l)
	})
}

// A .gitignore of any text, read as a find reads it, never fails a find,
// and a file is found exactly when neither it nor a folder on its way
// under the folder searched is left out by it (the folder a find names is
// searched, as ripgrep searches a path it is given).
func FuzzIgnore(f *testing.F) {
	f.Add("node_modules/\n/build\n*.log\n!keep.log\n# c\n", "src/a.log")
	f.Add("**/x/**\n\\#y\n  \n[\n!", "x/y/z")
	f.Add("a/**/b/\n/*\n!/t\n!/t/a", "a/q/b/c")
	f.Add("t/\n", "x")
	w, dir := space(f)
	f.Fuzz(func(t *testing.T, ignore, name string) {
		name = path.Clean(strings.Trim(name, "/"))
		els := strings.Split(name, "/")
		if name == "." || len(name) > 200 || len(els) > 8 || strings.ContainsAny(name, "\x00\\") || !utf8.ValidString(name) {
			return
		}
		for _, el := range els {
			if strings.HasPrefix(el, ".") || len(el) > 50 {
				return
			}
		}
		os.RemoveAll(filepath.Join(dir, "t"))
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(ignore), 0o644); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "t", filepath.FromSlash(name))
		if os.MkdirAll(filepath.Dir(file), 0o755) != nil || os.WriteFile(file, nil, 0o644) != nil {
			return // a name the system won't make
		}
		wk := &walker{}
		root, err := openRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		wk.readIgnores(root, nil)
		root.close()
		parts := append([]string{"t"}, els...)
		want := !wk.ignored(parts, false)
		for i := 2; i < len(parts); i++ {
			want = want && !wk.ignored(parts[:i], true)
		}
		found, err := w.Find(context.Background(), Query{Path: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(found.Files) == 1 && found.Files[0] == "t/"+name; got != want || len(found.Files) > 1 {
			t.Fatalf(".gitignore %q, t/%s: found %v, want found %v", ignore, name, found.Files, want)
		}
	})
}
