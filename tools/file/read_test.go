package file

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	eachWay(t, func(t *testing.T) {
		w, dir := space(t)
		ctx := context.Background()
		put(t, filepath.Join(dir, "notes", "todo.md"), "one\ntwo\nthree\nfour\n")
		l, err := w.Read(ctx, "notes/todo.md", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(l.Text, "|") != "one|two|three|four" || l.Total != 4 || l.From != 1 {
			t.Fatalf("whole: %+v", l)
		}
		l, err = w.Read(ctx, "./notes/../notes/todo.md", 2, 2)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(l.Text, "|") != "two|three" || l.Path != "notes/todo.md" {
			t.Fatalf("from 2, 2 lines: %+v", l)
		}
		text := FormatLines(l)
		if !strings.Contains(text, "notes/todo.md, lines 2-3 of 4") || !strings.Contains(text, "     2\ttwo\n") || !strings.Contains(text, "read from line 4") {
			t.Fatalf("answer:\n%s", text)
		}
		_, err = w.Read(ctx, "notes/todo.md", 9, 0)
		mustRefuse(t, err, "has 4 lines, so none from line 9")
		_, err = w.Read(ctx, "notes", 0, 0)
		mustRefuse(t, err, "a folder, not a file")
		_, err = w.Read(ctx, "nope.md", 0, 0)
		mustRefuse(t, err, "there is no such file")
	})
}

func TestReadLineEndsAndLongLines(t *testing.T) {
	w, dir := space(t)
	long := strings.Repeat("é", MaxLineBytes) // 2 bytes each
	put(t, filepath.Join(dir, "a.txt"), "dos\r\nline\r\n"+long+"\nlast without end")
	l, err := w.Read(context.Background(), "a.txt", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !l.CRLF || l.Text[0] != "dos" || l.Total != 4 || l.Text[3] != "last without end" {
		t.Fatalf("%+v", l)
	}
	if l.Clipped != 1 || len(l.Text[2]) != MaxLineBytes || !strings.HasPrefix(long, l.Text[2]) {
		t.Fatalf("the long line: %d bytes, %d clipped", len(l.Text[2]), l.Clipped)
	}
}

func TestReadBoundedBytes(t *testing.T) {
	w, dir := space(t)
	line := strings.Repeat("x", 1000)
	put(t, filepath.Join(dir, "wide.txt"), strings.Repeat(line+"\n", 200))
	l, err := w.Read(context.Background(), "wide.txt", 0, MaxLines)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Cut || len(l.Text) != MaxReadBytes/1001 || l.Total != 200 {
		t.Fatalf("cut %v, %d lines of %d", l.Cut, len(l.Text), l.Total)
	}
}

func TestReadBinary(t *testing.T) {
	w, dir := space(t)
	put(t, filepath.Join(dir, "a.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	put(t, filepath.Join(dir, "latin1.txt"), "caf\xe9\n")
	for _, name := range []string{"a.png", "latin1.txt"} {
		l, err := w.Read(context.Background(), name, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !l.Binary || len(l.Text) != 0 || !strings.Contains(FormatLines(l), "binary file") {
			t.Fatalf("%s: %+v", name, l)
		}
	}
}

// A 1 GB file is read as fast as a small one: its first lines, the rest
// said to follow uncounted; a line past the bound is refused, not looked
// for through the whole file.
func TestReadGigabyte(t *testing.T) {
	w, dir := space(t)
	name := filepath.Join(dir, "huge.log")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Repeat("a line of the log\n", 1000))
	// The rest is a hole: 1 GB on the file's size, little on the disk.
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	l, err := w.Read(context.Background(), "huge.log", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Text) != DefaultLines || l.Total != -1 || l.Size != 1<<30 {
		t.Fatalf("%d lines, total %d, size %d", len(l.Text), l.Total, l.Size)
	}
	if l.Scanned > MaxScan+64<<10 {
		t.Fatalf("looked through %d bytes, more than MaxScan", l.Scanned)
	}
	if !strings.Contains(FormatLines(l), "of more, not counted") {
		t.Fatalf("answer:\n%s", FormatLines(l)[:200])
	}
	_, err = w.Read(context.Background(), "huge.log", 5_000_000, 0)
	mustRefuse(t, err, "line 5000000 is past the first 64 MiB")
}

func TestPathRules(t *testing.T) {
	w, _ := space(t)
	ctx := context.Background()
	for _, c := range []struct{ path, want string }{
		{"", "no path"},
		{"a\x00b", "no NUL byte"},
		{"/etc/passwd", "an absolute path"},
		{strings.Repeat("a/", MaxPath), "at most 4096 bytes"},
	} {
		_, err := w.Read(ctx, c.path, 0, 0)
		mustRefuse(t, err, c.want)
		_, err = w.Write(ctx, c.path, []byte("x"))
		mustRefuse(t, err, c.want)
		_, err = w.Replace(ctx, c.path, "a", "b")
		mustRefuse(t, err, c.want)
		_, err = w.Find(ctx, Query{Path: c.path, Glob: "*"})
		if c.path != "" {
			mustRefuse(t, err, c.want)
		}
	}
}

// A named pipe is refused at once, never waited on.
func TestNamedPipe(t *testing.T) {
	eachWay(t, func(t *testing.T) {
		w, dir := space(t)
		if err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
			t.Skip("no named pipes here:", err)
		}
		ctx := context.Background()
		_, err := w.Read(ctx, "pipe", 0, 0)
		mustRefuse(t, err, "not a regular file")
		_, err = w.Write(ctx, "pipe", []byte("x"))
		mustRefuse(t, err, "not a regular file")
		_, err = w.Replace(ctx, "pipe", "a", "b")
		mustRefuse(t, err, "not a regular file")
		f, err := w.Find(ctx, Query{Pattern: "x"})
		if err != nil || f.Searched != 0 {
			t.Fatalf("find: %+v %v", f, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "pipe")); err != nil {
			t.Fatal("the pipe is gone:", err)
		}
	})
}
