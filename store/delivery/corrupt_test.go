package delivery

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lnk-dev/link/store/folder"
)

// syncBuffer is a log's output, safe to write from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// One answers.json that doesn't read, among 100 conversations, costs its
// own conversation only: it is set aside for a person (renamed, its bytes
// as they were), named in the log once however many recovers follow, and
// every other answer is handed over, by either phase. done lets the good
// ids go past a bad one.
func TestCorruptAnswersSetAside(t *testing.T) {
	for _, twoPhase := range []bool{false, true} {
		t.Run(fmt.Sprintf("two-phase %v", twoPhase), func(t *testing.T) {
			ctx := context.Background()
			var logs syncBuffer
			f := &Answers{Paths: agent(t), Now: func() time.Time { return t0 }, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			var want []string
			for i := range 100 {
				th := fmt.Sprintf("telegram:%d", i)
				if _, err := f.Keep(ctx, th, "answer of "+th, t0, 2); err != nil {
					t.Fatal(err)
				}
				if i != 37 {
					want = append(want, "answer of "+th)
				}
			}
			path, _ := f.Paths.ConversationFile("telegram:37", folder.Answers)
			bad := []byte(`[{"id": 5}`)
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := handOver(f, twoPhase, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sorted(want), sorted(texts(got))); diff != "" {
				t.Fatalf("handed over (-want +got):\n%s", diff)
			}
			aside, _ := filepath.Glob(filepath.Join(filepath.Dir(path), folder.AnswersAside+"*"))
			if len(aside) != 1 {
				t.Fatalf("set aside: %v, want one file", aside)
			}
			if b, err := os.ReadFile(aside[0]); err != nil || !bytes.Equal(b, bad) {
				t.Fatalf("the file set aside holds %q, %v: want its bytes as they were", b, err)
			}
			again, err := handOver(f, twoPhase, nil)
			if err != nil {
				t.Fatal(err)
			}
			if twoPhase {
				if diff := cmp.Diff(sorted(want), sorted(texts(again))); diff != "" {
					t.Fatalf("handed over again (-want +got):\n%s", diff)
				}
				ids := []string{"telegram-37~nothere", "../../etc~passwd", again[0].ID, again[1].ID}
				if err := f.Done(ctx, ids); err != nil {
					t.Fatalf("done with bad ids among good: %v", err)
				}
				left, _ := handOver(f, true, nil)
				if len(left) != len(want)-2 {
					t.Fatalf("after done: %d left, want %d", len(left), len(want)-2)
				}
			} else if len(again) != 0 {
				t.Fatalf("handed over again: %v", texts(again))
			}
			if n := strings.Count(logs.String(), "set aside"); n != 1 {
				t.Fatalf("named in the log %d times, want once:\n%s", n, logs.String())
			}
			if !strings.Contains(logs.String(), "telegram:37") {
				t.Fatalf("the log doesn't name the conversation:\n%s", logs.String())
			}
			// Its conversation goes on: a new answer there is kept and read.
			if _, err := f.Keep(ctx, "telegram:37", "after", t0, 3); err != nil {
				t.Fatal(err)
			}
			if all, err := readAnswers(filepath.Dir(path), "telegram:37"); err != nil || len(all) != 1 {
				t.Fatalf("answers of telegram:37 after: %+v, %v", all, err)
			}
		})
	}
}

// A sending file that doesn't read is passed over, costing no other.
func TestCorruptSendingPassedOver(t *testing.T) {
	ctx := context.Background()
	f := &Answers{Paths: agent(t)}
	for i := range 3 {
		id, _ := NewID(fmt.Sprintf("telegram:%d", i))
		if err := f.Hold(ctx, Answer{ID: id, Thread: fmt.Sprintf("telegram:%d", i), Text: fmt.Sprint(i)}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.Paths.Chats(), SendingDir, "telegram-9~ab.json"), []byte(`{"id": 5`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := handOver(f, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"0", "1", "2"}, sorted(texts(got))); diff != "" {
		t.Fatalf("handed over (-want +got):\n%s", diff)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
