//go:build unix

package server_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// startProcess starts a memory server of home in a process of its own
// (this test binary, as serveHelper), answering its URL.
func startProcess(tb testing.TB, home string) (*exec.Cmd, string) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+home)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatalf("the server process said no URL: %v", err)
	}
	return cmd, strings.TrimSpace(line)
}

// notesOf reads the notes file as lines, failing on any line that isn't a
// dated note.
func notesOf(tb testing.TB, p store.Paths) map[string]bool {
	tb.Helper()
	b, err := os.ReadFile(p.Notes())
	if err != nil {
		tb.Fatal(err)
	}
	got := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		rest, ok := strings.CutPrefix(l, "- ")
		if !ok || len(rest) < 13 || rest[10:12] != ": " {
			tb.Fatalf("a corrupt line in notes.md: %q", l)
		}
		if got[rest[12:]] {
			tb.Fatalf("a note twice: %q", l)
		}
		got[rest[12:]] = true
	}
	return got
}

// Two processes, each taking 50 remember calls at once, lose none and
// corrupt none: every note is in the file, once, whole.
func TestTwoProcessesRemember(t *testing.T) {
	home := t.TempDir()
	p, _ := store.For(home, "main")
	var sessions = make([]func(int) (string, bool), 2)
	for i := range sessions {
		_, url := startProcess(t, home)
		s := connect(t, url)
		sessions[i] = func(n int) (string, bool) {
			return call(t, s, "remember", map[string]any{"note": fmt.Sprintf("process %d says %02d", i, n)})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for i := range sessions {
		for n := range 50 {
			wg.Go(func() {
				if text, failed := sessions[i](n); failed {
					errs <- text
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	got := notesOf(t, p)
	for i := range 2 {
		for n := range 50 {
			if note := fmt.Sprintf("process %d says %02d", i, n); !got[note] {
				t.Errorf("lost %q", note)
			}
		}
	}
	if len(got) != 100 {
		t.Fatalf("%d notes, want 100", len(got))
	}
}

// A server killed while remembering loses nothing it acknowledged, and
// leaves the file whole.
func TestKillMidRemember(t *testing.T) {
	home := t.TempDir()
	p, _ := store.For(home, "main")
	cmd, url := startProcess(t, home)
	s := connect(t, url)
	var mu sync.Mutex
	acked := map[string]bool{}
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-killed:
					return
				default:
				}
				note := fmt.Sprintf("worker %d note %d", w, n)
				res, err := s.CallTool(t.Context(), rememberParams(note))
				if err != nil || res.IsError {
					return // the process died under it
				}
				mu.Lock()
				acked[note] = true
				enough := len(acked) >= 40
				mu.Unlock()
				if enough {
					select {
					case <-killed:
					default:
						close(killed)
						cmd.Process.Signal(syscall.SIGKILL)
					}
					return
				}
			}
		})
	}
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("40 notes not acknowledged in a minute")
	}
	wg.Wait()
	cmd.Wait()
	got := notesOf(t, p)
	mu.Lock()
	defer mu.Unlock()
	for note := range acked {
		if !got[note] {
			t.Errorf("acknowledged, then lost by the kill: %q", note)
		}
	}
	t.Logf("%d acknowledged, %d in the file", len(acked), len(got))
}
