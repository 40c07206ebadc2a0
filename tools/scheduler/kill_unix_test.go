//go:build unix

package scheduler

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/send"
)

// A scheduler in a process of its own, the test binary run again: the
// environment names its home, the agent's endpoint and key, and where it
// SIGKILLs itself.
const (
	childURL    = "LNK_SCHED_TEST_URL"
	childKey    = "LNK_SCHED_TEST_KEY"
	childKillAt = "LNK_SCHED_TEST_KILL" // recorded, moved, received or none
)

// schedulerChild runs a scheduler as the environment says until it is
// killed, SIGKILLing itself at its kill point: once an occurrence's
// message is recorded (before its schedule moves on), once its schedule
// moved on (the message being sent meanwhile), or once the harness has
// the message (before the outbox forgets it).
func schedulerChild() int {
	p, err := store.For(os.Getenv(childEnv), contract.DefaultAgent)
	if err != nil {
		return 2
	}
	s, err := Open(Options{Paths: p, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond})
	if err != nil {
		return 2
	}
	die := func() { // SIGKILL on Unix, TerminateProcess on Windows
		if me, err := os.FindProcess(os.Getpid()); err == nil {
			me.Kill()
		}
	}
	s.mu.Lock()
	switch os.Getenv(childKillAt) {
	case "recorded":
		s.onFire = func(*Schedule, time.Time) { die() }
	case "moved":
		s.onMoved = func(*Schedule) { die() }
	case "received":
		s.deliver.Received = func(send.Message) { die() }
	}
	s.mu.Unlock()
	s.SetTarget(send.Target{URL: os.Getenv(childURL), Key: []byte(os.Getenv(childKey)), Agent: contract.DefaultAgent})
	select {}
}

// child is the scheduler's process: exited is closed once it ended,
// err then how.
type child struct {
	exited chan struct{}
	err    error
}

// startChild starts the scheduler's process over r's home, killing itself
// at killAt; the test's end kills it if it still runs.
func startChild(t *testing.T, r *harnesstest.Rig, killAt string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+r.Home, childURL+"="+r.URL, childKey+"="+string(r.Key), childKillAt+"="+killAt)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{exited: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.exited
	})
	return c
}

// Kill the scheduler at the instant of firing, start it again, count:
// each kill point (the message recorded, the schedule moved on, the
// message received by the harness) leaves the reminder received exactly
// once, one turn of the model, nothing left to send
// (TestKilledAtFiring).
func TestKilledAtFiring(t *testing.T) {
	for _, at := range []string{"recorded", "moved", "received"} {
		t.Run(at, func(t *testing.T) {
			r := harnesstest.New(t)
			answers(r, 2) // a second turn would find an answer: it must not be asked
			p := r.Paths()
			s, err := Open(Options{Paths: p, Settings: func(context.Context) (Settings, error) { return testSettings, nil }})
			if err != nil {
				t.Fatal(err)
			}
			sc, err := s.Add(t.Context(), Request{Text: "call the bank", After: "1s"}, "telegram:5", 0)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			c := startChild(t, r, at)
			select {
			case <-c.exited:
				var ee *exec.ExitError
				if !errors.As(c.err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("the scheduler ended %v, not killed at %s", c.err, at)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("the scheduler never reached %s", at)
			}
			startChild(t, r, "")
			id := occurrenceID(sc.ID, sc.Next)
			testwait.For(t, 10*time.Second, "the reminder received and nothing left to send", func() bool {
				return len(scheduled(r, "telegram:5")) > 0 && emptyDir(t, filepath.Join(Dir(p), "outbox")) && emptyDir(t, filepath.Join(Dir(p), "schedules"))
			})
			got := scheduled(r, "telegram:5")
			if len(got) != 1 || got[0].MessageID != id || got[0].From != "schedule:"+sc.ID {
				t.Fatalf("killed at %s: stored %+v, want the reminder once", at, got)
			}
			testwait.For(t, 10*time.Second, "its turn", func() bool { return len(r.Requests("telegram:5")) >= 1 })
			if n := len(r.Requests("telegram:5")); n != 1 {
				t.Fatalf("killed at %s: the model was asked %d times", at, n)
			}
		})
	}
}

// emptyDir says whether dir holds no file but temporary ones.
func emptyDir(t *testing.T, dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			return false
		}
	}
	return true
}

// SIGKILL the harness with a reminder's turn under way, and have a second
// reminder come while it is down: started again, it finishes the first's
// turn, the second is sent to it once it answers, and each is stored
// once, its answer kept once for the owner (TestReminderAcrossHarnessKill).
func TestReminderAcrossHarnessKill(t *testing.T) {
	r := newHarnessRig(t, 1)
	r.fake.Script(fakeprovider.Turn{Hang: true}, fakeprovider.Turn{Text: "Noted."}, fakeprovider.Turn{Text: "Noted."})
	p, err := store.For(r.home, contract.DefaultAgent)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{Paths: p, Settings: func(context.Context) (Settings, error) { return testSettings, nil }, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetTarget(send.Target{URL: r.proc.url, Key: r.key, Agent: contract.DefaultAgent})
	first, err := s.Add(t.Context(), Request{Text: "call the bank", After: "1s"}, "link:chat", 0)
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 20*time.Second, "the reminder's turn to reach the model", func() bool { return len(r.fake.Requests()) == 1 })
	r.proc.kill()
	second, err := s.Add(t.Context(), Request{Text: "water the plants", After: "1s"}, "link:chat", 0)
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 20*time.Second, "the second reminder recorded", func() bool { return len(s.List()) == 0 })
	r.start(t)
	s.SetTarget(send.Target{URL: r.proc.url, Key: r.key, Agent: contract.DefaultAgent})
	var kept []Kept
	testwait.For(t, 60*time.Second, "both answers kept for the owner", func() bool {
		var err error
		kept, err = Sent{}.Kept(context.Background(), Endpoint{URL: r.proc.url, Key: r.key}, "link:chat")
		return err == nil && len(kept) >= 2
	})
	waitIdle(t, s)
	got := messagesFrom(events(t, r.home, "link:chat"), "schedule:")
	if len(got) != 2 || got[0].From != "schedule:"+first.ID || got[1].From != "schedule:"+second.ID {
		t.Fatalf("stored %+v, want each reminder once", got)
	}
	if len(kept) != 2 || kept[0].Text != "Noted." || kept[1].Text != "Noted." {
		t.Fatalf("kept %+v, want each answer once", kept)
	}
}
