package router_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
)

// perEventFolder writes thread's conversation in the layout from before
// the log, a file per event (events/00000000000000000001.json, each its
// event's line), beside what else the folder holds; it returns the
// folder and every file's bytes as written.
func perEventFolder(t *testing.T, p store.Paths, thread string, extra map[string]string) (string, map[string]string) {
	t.Helper()
	dir, err := p.Conversation(thread)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for seq, text := range []string{"hello", "hi there"} {
		kind := store.KindMessage
		if seq == 1 {
			kind = store.KindAnswer
		}
		line := fmt.Sprintf(`{"seq":%d,"time":"2025-06-01T10:00:0%dZ","kind":%q,"text":%q}`+"\n", seq+1, seq, kind, text)
		files[filepath.Join("events", fmt.Sprintf("%020d.json", seq+1))] = line
	}
	for name, text := range extra {
		files[name] = text
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, files
}

// unchanged fails t unless dir holds exactly files, each as written.
func unchanged(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	seen := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		want, ok := files[rel]
		if !ok {
			t.Errorf("%s written into the folder", rel)
		} else if string(b) != want {
			t.Errorf("%s changed: %q, was %q", rel, b, want)
		}
		seen++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(files) {
		t.Errorf("%d files left of %d", seen, len(files))
	}
}

// TestFilePerEventRefused: a conversation's folder in the layout from
// before the log, a file per event, is refused saying so, by driver.Of and
// by the router's every read and write, never taken for a conversation
// not begun (which the first message would start anew); nothing in it is
// written or removed. Beside a log's events.jsonl it is refused too.
func TestFilePerEventRefused(t *testing.T) {
	for _, c := range []struct {
		name  string
		extra map[string]string
	}{
		{"alone", nil},
		{"with its tools and lease", map[string]string{"tools.json": "[]", "lease.json": "{}"}},
		{"beside a log", map[string]string{"events.jsonl": `{"seq":1,"time":"2025-06-01T10:00:00Z","kind":"message","text":"new"}` + "\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := store.For(t.TempDir(), "main")
			if err != nil {
				t.Fatal(err)
			}
			const thread = "telegram:42"
			dir, files := perEventFolder(t, p, thread, c.extra)
			kind, err := driver.Of(dir)
			if !errors.Is(err, driver.ErrFilePerEvent) || kind != "" {
				t.Fatalf("Of = %q, %v; want ErrFilePerEvent", kind, err)
			}
			if !strings.Contains(err.Error(), "a file per event") || !strings.Contains(err.Error(), dir) {
				t.Errorf("the refusal says %q", err)
			}
			r, err := router.New(p, log.Name, map[string]store.Conversations{log.Name: log.Open(p.Chats())})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if evs, err := r.Read(ctx, thread, 1); !errors.Is(err, driver.ErrFilePerEvent) {
				t.Errorf("Read = %d events, %v", len(evs), err)
			}
			if _, err := r.Latest(ctx, thread, 10); !errors.Is(err, driver.ErrFilePerEvent) {
				t.Errorf("Latest: %v", err)
			}
			if err := r.Append(ctx, thread, store.Event{Seq: 1, Kind: store.KindMessage, Text: "again"}); !errors.Is(err, driver.ErrFilePerEvent) {
				t.Errorf("Append: %v", err)
			}
			unchanged(t, dir, files)
		})
	}
}
