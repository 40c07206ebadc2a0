package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// killEnv makes the test binary a process that replaces a file's text and
// stops halfway through writing it, saying so on its standard output: the
// kill test kills it there.
const killEnv = "LNK_FILE_TEST_KILL"

func TestMain(m *testing.M) {
	if dir := os.Getenv(killEnv); dir != "" {
		os.Exit(replaceAndHang(dir))
	}
	if dir := os.Getenv(confinedEnv); dir != "" {
		os.Exit(serveConfined(dir))
	}
	os.Exit(m.Run())
}

// replaceAndHang replaces "old" with "new" in big.txt of the workspace
// dir, hanging halfway through its write.
func replaceAndHang(dir string) int {
	w, err := New(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	midWrite = func() {
		fmt.Println("halfway")
		select {} // until killed
	}
	if _, err := w.Replace(context.Background(), "big.txt", "old", "new"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return 1
}

// space is a new workspace, "files" in a folder of its own beside which
// "outside" holds a file no call may reach.
func space(tb testing.TB) (*Workspace, string) {
	tb.Helper()
	top := tb.TempDir()
	dir := filepath.Join(top, "files")
	put(tb, filepath.Join(top, "outside", "secret.txt"), "the secret\n")
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	w, err := New(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(w.Close)
	return w, dir
}

func put(tb testing.TB, path, text string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func get(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// mustRefuse fails unless err is a refusal whose text holds want.
func mustRefuse(tb testing.TB, err error, want string) {
	tb.Helper()
	if err == nil || !IsRefusal(err) {
		tb.Fatalf("want a refusal saying %q, got %v", want, err)
	}
	if !contains(err.Error(), want) {
		tb.Fatalf("refusal %q doesn't say %q", err, want)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
