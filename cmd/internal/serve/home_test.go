//go:build linux

package serve

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/store"
	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs of size at a fresh folder, unmounted when the
// test ends; it skips the test where mounting isn't allowed.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("a file system of its own (to make it full or read-only) needs mount: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// health asks s's /health and returns its status and body.
func health(t *testing.T, s *Server) (int, string) {
	t.Helper()
	url := strings.TrimSuffix(s.URL(), contract.ACPPath) + contract.HealthPath
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestHomeNotWritable: a harness whose home becomes read-only, or whose
// disk fills, says so at /health (naming no path), and one doesn't start
// on such a home, saying why.
func TestHomeNotWritable(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		spoil     func(t *testing.T, home string)
	}{
		{"read-only", "read-only file system", func(t *testing.T, home string) {
			if err := unix.Mount("", home, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
				t.Fatal(err)
			}
		}},
		{"full", "no space left on device", func(t *testing.T, home string) {
			f, err := os.Create(filepath.Join(home, "filler"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			chunk := make([]byte, 64<<10)
			for {
				if _, err := f.Write(chunk); err != nil {
					if !errors.Is(err, unix.ENOSPC) {
						t.Fatal(err)
					}
					return
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := mountTmpfs(t, "1m")
			s, _ := startServed(t, func(c *Config) { c.Home = home })
			if status, body := health(t, s); status != http.StatusOK || body != "ok" {
				t.Fatalf("a writable home: %d %q", status, body)
			}
			tc.spoil(t, home)
			// /health looks again once its last look is HealthFresh old.
			var status int
			var body string
			_ = testwait.Err(3*harness.HealthFresh, "/health to look again", func() bool { // the check below says what it saw
				status, body = health(t, s)
				return status != http.StatusOK
			})
			if status != http.StatusServiceUnavailable || body != "the home can't be written: "+tc.why {
				t.Fatalf("/health of a %s home: %d %q", tc.name, status, body)
			}
			s.Close()
			_, err := Start(t.Context(), Config{Home: home, Key: testKey})
			if err == nil || !strings.Contains(err.Error(), "the home "+home+" can't be written: "+tc.why) {
				t.Fatalf("started on a %s home: %v", tc.name, err)
			}
		})
	}
}

// TestConversationFolderLink: a conversation's folder that is a symbolic
// link, or its events file, is refused, saying so without a path of the
// machine, and nothing is written where the link points.
func TestConversationFolderLink(t *testing.T) {
	s, home := startServed(t, nil)
	p, err := store.For(home, contract.DefaultAgent)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	if err := os.MkdirAll(p.Chats(), 0o700); err != nil {
		t.Fatal(err)
	}
	folder, err := p.Conversation("link:linked")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, folder); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c := dialThread(t, s, "link:linked")
	err = prompt(ctx, c, `{"sessionId":"link:linked","prompt":[{"type":"text","text":"hi"}]}`)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || strings.Contains(err.Error(), "/") {
		t.Fatalf("a message to a linked folder: %v", err)
	}
	// The events file a link, in a folder of its own.
	folder2, _ := p.Conversation("link:file")
	if err := os.MkdirAll(folder2, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "events.jsonl"), filepath.Join(folder2, "events.jsonl")); err != nil {
		t.Fatal(err)
	}
	c2 := dialThread(t, s, "link:file")
	err = prompt(ctx, c2, `{"sessionId":"link:file","prompt":[{"type":"text","text":"hi"}]}`)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || strings.Contains(err.Error(), "/") {
		t.Fatalf("a message whose events file is a link: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("written where the links point: %v", entries)
	}
}

// TestChatsFolderLink: the agent's conversations folder itself (chats/)
// a symbolic link to another agent's is refused, saying so without a
// path of the machine: nothing of the other agent's conversation is
// answered from, and nothing written where the link points.
func TestChatsFolderLink(t *testing.T) {
	s, home := startServed(t, nil)
	p, err := store.For(home, contract.DefaultAgent)
	if err != nil {
		t.Fatal(err)
	}
	other, err := store.For(home, "work")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := other.Conversation("link:x")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(theirs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other.Chats(), p.Chats()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c := dialThread(t, s, "link:x")
	err = prompt(ctx, c, `{"sessionId":"link:x","prompt":[{"type":"text","text":"hi"}]}`)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || strings.Contains(err.Error(), "/") {
		t.Fatalf("a message through a linked chats folder: %v", err)
	}
	if entries, _ := os.ReadDir(theirs); len(entries) != 0 {
		t.Fatalf("written in the other agent's conversation: %v", entries)
	}
}

// TestHealthNoWritePerAsk: /health asked 2,000 times from 8 clients at
// once writes the home at most once a HealthFresh, as the kernel's
// notes of files made in it count (inotify), and answers ok each time.
func TestHealthNoWritePerAsk(t *testing.T) {
	s, home := startServed(t, nil)
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, home, unix.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSuffix(s.URL(), contract.ACPPath) + contract.HealthPath
	const asks, clients = 2000, 8
	began := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad := 0
	for range clients {
		wg.Go(func() {
			for range asks / clients {
				resp, err := http.Get(url)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err != nil || resp.StatusCode != http.StatusOK {
					mu.Lock()
					bad++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	made := 0
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			if strings.HasPrefix(name, ".write-check-") {
				made++
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
	most := 1 + int(took/harness.HealthFresh) + 1
	t.Logf("%d asks of /health in %v (%.0f a second): %d files written in the home", asks, took.Round(time.Millisecond), asks/took.Seconds(), made)
	if bad > 0 {
		t.Errorf("%d asks not answered ok", bad)
	}
	if made > most {
		t.Errorf("%d files written for %d asks in %v, want at most %d", made, asks, took, most)
	}
}
