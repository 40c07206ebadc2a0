package agentlog

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// Warnings and errors reach the file, info doesn't, and Last reads the
// last of them, its message unquoted.
func TestLast(t *testing.T) {
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := Last(context.Background(), p); ok || err != nil {
		t.Fatalf("no log: %v %v", ok, err)
	}
	var out strings.Builder
	l, closeLog := Logger(p, &out, slog.LevelInfo)
	l.Info("started")
	l.Warn("turn failed", "thread", "link:chat", "err", "the model said 500")
	l.Error(`keep an "answer"`, "err", "disk full")
	l.Info("still going")
	if err := closeLog(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(File(p))
	if strings.Contains(string(b), "started") || strings.Count(string(b), "\n") != 2 {
		t.Fatalf("log:\n%s", b)
	}
	if fi, _ := os.Stat(File(p)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	f, ok, err := Last(context.Background(), p)
	if !ok || err != nil || f.Level != "ERROR" || f.Message != `keep an "answer"` || f.Time == "" || !strings.Contains(f.Line, "disk full") {
		t.Fatalf("%+v %v %v", f, ok, err)
	}
	if !strings.Contains(out.String(), "started") {
		t.Fatalf("the writer missed info: %s", out.String())
	}
}

// FuzzParse: any line parses without panic.
func FuzzParse(f *testing.F) {
	f.Add(`time=2026-12-01T10:00:00Z level=WARN msg="turn failed" err=x`)
	f.Add(`msg="unterminated \"`)
	f.Fuzz(func(t *testing.T, line string) {
		fl := parse(line)
		if fl.Line != line {
			t.Fatal("line changed")
		}
	})
}

// The log lies in the agent's folder: a harness.log that is a symbolic
// link (to another agent's file) is neither written through, its target
// left as it was, nor read by Last, which refuses it, naming why.
func TestLogNotThroughALink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	home := t.TempDir()
	p, err := store.For(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	other, err := store.For(home, "other")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(other.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	theirs := File(other)
	const was = "time=2026-12-01T10:00:00Z level=ERROR msg=\"other's failure\" err=secret\n"
	if err := os.WriteFile(theirs, []byte(was), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(theirs, File(p)); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	l, closeLog := Logger(p, &out, slog.LevelInfo)
	l.Error("mine", "err", "x")
	closeLog()
	if b, _ := os.ReadFile(theirs); string(b) != was {
		t.Fatalf("written through the link:\n%s", b)
	}
	if !strings.Contains(out.String(), "open the agent's log") || !strings.Contains(out.String(), fsx.ErrSymlink.Error()) {
		t.Fatalf("the refusal isn't said: %s", out.String())
	}
	f, ok, err := Last(context.Background(), p)
	if ok || !errors.Is(err, fsx.ErrSymlink) {
		t.Fatalf("Last read through the link: %+v %v %v", f, ok, err)
	}
}
