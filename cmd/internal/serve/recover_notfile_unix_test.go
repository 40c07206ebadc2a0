//go:build unix

package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
	"golang.org/x/sys/unix"
)

// TestRecoverDoneNotAFile: a done naming an id of a conversation whose
// answers.json is a symbolic link (to another agent's file) or a named
// pipe passes that id over, as any id that isn't one, and lets the
// others go: the request used to fail whole (-32603). Neither is read,
// followed nor changed.
func TestRecoverDoneNotAFile(t *testing.T) {
	home := t.TempDir()
	p, err := store.For(home, contract.DefaultAgent)
	if err != nil {
		t.Fatal(err)
	}
	f := &delivery.Answers{Paths: p}
	if _, err := f.Keep(t.Context(), "telegram:3", "a real one", time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(t.TempDir(), "answers.json")
	theirBytes := []byte(`[{"id":"telegram-1~aa","thread":"telegram:1","text":"another agent's"}]`)
	if err := os.WriteFile(theirs, theirBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	link, pipe := answersFileOf(t, p, "telegram:1"), answersFileOf(t, p, "telegram:2")
	if err := os.Symlink(theirs, link); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := startServed(t, func(c *Config) { c.Home = home })
	c := dialThread(t, s, "")
	raw, err := c.Conn().Call(t.Context(), contract.MethodRecover, contract.RecoverParams{TwoPhase: true})
	var two contract.RecoverResult
	if err == nil {
		err = json.Unmarshal(raw, &two)
	}
	if err != nil || len(two.Answers) != 1 || two.Answers[0].Text != "a real one" {
		t.Fatalf("two-phase recover: %+v, %v; want the real one alone", two.Answers, err)
	}
	done := []string{"telegram-1~aa", "telegram-2~bb", two.Answers[0].ID}
	if _, err := c.Conn().Call(t.Context(), contract.MethodRecover, contract.RecoverParams{Done: done}); err != nil {
		t.Fatalf("done %v: %v; want the link's and the pipe's passed over", done, err)
	}
	if left, err := f.Pending(t.Context()); err != nil || len(left) != 0 {
		t.Errorf("left kept: %+v, %v", left, err)
	}
	if b, _ := os.ReadFile(theirs); string(b) != string(theirBytes) {
		t.Errorf("the file linked to was changed: %q", b)
	}
	if fi, err := os.Lstat(pipe); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the named pipe: %v, %v", fi, err)
	}
}

// answersFileOf is the path of thread's answers.json in p, its folder made.
func answersFileOf(t *testing.T, p store.Paths, thread string) string {
	t.Helper()
	dir, err := p.Conversation(thread)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "answers.json")
}
