package mcpserve

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// testTool is the tool the tests serve.
var testTool = Tool{Name: "test", Title: "Link Test", Env: "LNK_TEST"}

// KeepSecret makes a secret once and gives it again; makes a new one for
// a file cut short or written by hand, saying so without the secret;
// refuses a link, a folder and a folder others may write, naming the
// rule; and concurrent first starts agree on one secret.
func TestKeepSecret(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memory")
	path := filepath.Join(dir, "secret")
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))

	s, err := testTool.KeepSecret(ctx, path, false, logger)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := testTool.KeepSecret(ctx, path, false, logger); err != nil || again != s {
		t.Fatalf("kept secret: %v, the same %v", err, again == s)
	}
	if fi, err := os.Stat(dir); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700 {
		t.Fatalf("the folder: %v %v", fi.Mode(), err)
	}
	if log.Len() != 0 {
		t.Fatalf("a first start logged: %s", log.String())
	}
	if renewed, err := testTool.KeepSecret(ctx, path, true, logger); err != nil || renewed == s {
		t.Fatalf("renew: %v, new %v", err, renewed != s)
	}
	if got := (Secret{"x"}).String() + slogText(Secret{"x"}); strings.Contains(got, "x") {
		t.Fatalf("a secret printed itself: %q", got)
	}

	// Cut short, or not base64url: a new one, said.
	for _, bad := range []string{"", "abc\n", s.v[:42] + "\n", strings.Repeat("=", 43), s.v + "\n\n", strings.Repeat("a", 300)} {
		log.Reset()
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := testTool.KeepSecret(ctx, path, false, logger)
		if err != nil || got.v == "" || got.v == strings.TrimSpace(bad) {
			t.Fatalf("%q: %v", bad, err)
		}
		if !strings.Contains(log.String(), "held no secret") || strings.Contains(log.String(), got.v) {
			t.Fatalf("%q: log %s", bad, log.String())
		}
		if b, _ := os.ReadFile(path); string(b) != got.v+"\n" {
			t.Fatalf("%q: file now %q", bad, b)
		}
	}

	// Refused: a link (never followed), a folder in its place.
	other := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(other, []byte(NewSecret().v+"\n"), 0o600)
	os.Remove(path)
	if err := os.Symlink(other, path); err == nil {
		if _, err := testTool.KeepSecret(ctx, path, false, logger); err == nil || !strings.Contains(err.Error(), "symbolic link, not followed") {
			t.Fatalf("a link: %v", err)
		}
		os.Remove(path)
	}
	os.Mkdir(path, 0o700)
	if _, err := testTool.KeepSecret(ctx, path, false, logger); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a folder: %v", err)
	}
	os.Remove(path)
	if runtime.GOOS != "windows" {
		os.Chmod(dir, 0o777)
		if _, err := testTool.KeepSecret(ctx, path, false, logger); err == nil || !strings.Contains(err.Error(), "may be written by others (mode 0777)") {
			t.Fatalf("a folder others write: %v", err)
		}
		os.Chmod(dir, 0o700)
	}

	// Concurrent first starts agree.
	os.Remove(path)
	got := make([]Secret, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			s, err := testTool.KeepSecret(ctx, path, false, logger)
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		})
	}
	wg.Wait()
	for _, s := range got[1:] {
		if s != got[0] {
			t.Fatal("concurrent starts made two secrets")
		}
	}
}

// slogText is v as a text log writes it.
func slogText(v any) string {
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, nil)).Info("m", "v", v)
	return b.String()
}

// parseSecret takes exactly 43 base64url characters standing for 32
// bytes, and one newline after them at most; what it takes it gives back
// as it was written.
func FuzzParseSecret(f *testing.F) {
	f.Add([]byte(NewSecret().v + "\n"))
	f.Add([]byte("abc"))
	f.Add([]byte(strings.Repeat("A", 42) + "=\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, ok := parseSecret(b)
		if !ok {
			return
		}
		if len(s.v) != 43 || string(b) != s.v && string(b) != s.v+"\n" {
			t.Fatalf("%q taken as %q", b, s.v)
		}
		if again, ok := parseSecret([]byte(s.v)); !ok || again != s {
			t.Fatalf("%q not taken again", s.v)
		}
	})
}
