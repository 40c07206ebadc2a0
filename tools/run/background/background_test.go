package background

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
)

// A command's end is told once to the conversation that started it, from
// its id, with its exit status and output; a Manager opened again later
// tells nothing more.
func TestEndTold(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder()
	m := open(t, dir, r, Options{})
	in := start(t, m, "echo hello; echo trouble >&2; exit 3")
	msg := r.next(t)
	if msg.ID != in.ID || msg.Thread != "link:test" {
		t.Fatalf("told %+v, want command %s in link:test", msg, in.ID)
	}
	for _, want := range []string{"run:" + in.ID, "exit status 3", "hello\ntrouble\n", "echo hello"} {
		if !strings.Contains(msg.Text, want) {
			t.Errorf("the end told lacks %q:\n%s", want, msg.Text)
		}
	}
	got, err := m.List()
	if err != nil || len(got) != 1 || got[0].Status != Ended || got[0].End.Exit != 3 {
		t.Fatalf("list: %+v, %v; want one ended with exit status 3", got, err)
	}
	m.Close()
	again := open(t, dir, r, Options{})
	again.sweep(context.Background())
	if n := len(r.msgs); n != 1 {
		t.Fatalf("%d ends told, want 1", n)
	}
}

// run__read reads the output at any offset, at most its limit at a time,
// never a character cut in two; an offset past the end is refused.
func TestReadBounded(t *testing.T) {
	r := newRecorder()
	m := open(t, t.TempDir(), r, Options{})
	in := start(t, m, "seq 1 20000; printf 'aé'")
	r.next(t)
	var want bytes.Buffer
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	want.WriteString("aé")
	var got strings.Builder
	var off int64
	reads := 0
	for {
		out, info, err := m.Read(in.ID, off, 4096)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Text) > 4096 || info.Status != Ended {
			t.Fatalf("read %d bytes of a 4096 limit, status %s", len(out.Text), info.Status)
		}
		got.WriteString(out.Text)
		reads++
		if out.Next == out.Total {
			break
		}
		off = out.Next
	}
	if got.String() != want.String() {
		t.Fatalf("read %d bytes in %d reads, want %d bytes as written", got.Len(), reads, want.Len())
	}
	total := int64(want.Len())
	// A limit ending inside é reads up to it; the next read begins there.
	out, _, err := m.Read(in.ID, total-3, 2)
	if err != nil || out.Text != "a" || out.Next != total-2 {
		t.Fatalf("read 2 bytes before é: %q next %d, %v; want \"a\" next %d", out.Text, out.Next, err, total-2)
	}
	// An offset inside é reads its broken half as U+FFFD.
	if out, _, err = m.Read(in.ID, total-1, 10); err != nil || out.Text != "\uFFFD" {
		t.Fatalf("read from inside é: %q, %v", out.Text, err)
	}
	if _, _, err := m.Read(in.ID, total+1, 10); !errors.Is(err, ErrOffset) {
		t.Fatalf("read past the end: %v, want ErrOffset", err)
	}
	if _, _, err := m.Read("../../x", 0, 10); !errors.Is(err, ErrNoSuch) {
		t.Fatalf("read of a path for an id: %v, want ErrNoSuch", err)
	}
}

// A command flooding its output keeps the latest KeepOutput or so on
// disk, never more; a read of what was dropped says so and reads on
// from the oldest kept.
func TestFlood(t *testing.T) {
	r := newRecorder()
	const keep = 1 << 20
	m := open(t, t.TempDir(), r, Options{KeepOutput: keep})
	in := start(t, m, "yes flood")
	testwait.For(t, 30*time.Second, "40 MiB of output", func() bool {
		got, _ := m.info(in.ID)
		return got.Output > 40*keep
	})
	if _, err := m.Stop(context.Background(), in.ID); err != nil {
		t.Fatal(err)
	}
	segs, err := listSegments(m.dir(in.ID))
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, s := range segs {
		size += s.size
	}
	if size > keep+keep/segments || size < keep-keep/segments {
		t.Fatalf("%d bytes kept on disk, want about %d", size, keep)
	}
	out, info, err := m.Read(in.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if out.Dropped == 0 || out.From != out.Dropped || info.End.Output < 40*keep || !strings.HasPrefix(strings.TrimLeft(out.Text, "flod"), "\nflood\n") {
		t.Fatalf("read from 0 of a flood: from %d, dropped %d, total %d, %q", out.From, out.Dropped, info.End.Output, out.Text)
	}
}

// run__stop ends the whole command: its process group, a process that
// left it (setsid), one that ignores SIGTERM; it answers how the command
// ended, and no end is told besides.
func TestStopWholeGroup(t *testing.T) {
	r := newRecorder()
	m := open(t, t.TempDir(), r, Options{Grace: 200 * time.Millisecond})
	in := start(t, m, "sleep 1000 & echo $!; setsid sleep 1000 & echo $!; sh -c 'trap \"\" TERM; exec sleep 1000' & echo $!; wait")
	pids := waitPIDs(t, m, in.ID, 3)
	got, err := m.Stop(context.Background(), in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != Ended || !got.End.Stopped {
		t.Fatalf("stop answered %+v, want ended, stopped", got)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d of the command still runs after its stop", pid)
		}
	}
	m.sweep(context.Background())
	if len(r.msgs) != 0 {
		t.Fatalf("a stopped command's end was told: %+v", r.msgs)
	}
	if again, err := m.Stop(context.Background(), in.ID); err != nil || again.Status != Ended {
		t.Fatalf("a second stop: %+v, %v", again, err)
	}

	// A command all of whose processes ignore SIGTERM is killed after
	// the grace.
	deaf := start(t, m, "trap '' TERM; sleep 1000 & echo $!; echo $$; wait")
	pids = waitPIDs(t, m, deaf.ID, 2)
	began := time.Now()
	got, err = m.Stop(context.Background(), deaf.ID)
	if err != nil || got.End.Signal != "killed" {
		t.Fatalf("stop of a command deaf to SIGTERM: %+v, %v; want killed", got, err)
	}
	if took := time.Since(began); took < 200*time.Millisecond {
		t.Errorf("stopped in %s, before the grace of 200 ms", took)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d of the command deaf to SIGTERM still runs after its stop", pid)
		}
	}
}

// A command whose first process ends takes every process it left with
// it, one in a session of its own too.
func TestEndTakesWhatItLeft(t *testing.T) {
	r := newRecorder()
	m := open(t, t.TempDir(), r, Options{})
	start(t, m, "setsid sleep 1000 & echo $!; sleep 1000 & echo $!; exit 0")
	msg := r.next(t)
	if !strings.Contains(msg.Text, "exit status 0") {
		t.Fatalf("told %q", msg.Text)
	}
	for _, line := range strings.Fields(msg.Text[strings.Index(msg.Text, "bytes:\n")+7:]) {
		pid, err := strconv.Atoi(line)
		if err != nil {
			t.Fatalf("output %q", msg.Text)
		}
		if alive(pid) {
			t.Errorf("process %d the command left still runs after its end", pid)
		}
	}
}

// waitPIDs waits for n process ids in command id's output, a line each.
func waitPIDs(t *testing.T, m *Manager, id string, n int) []int {
	t.Helper()
	var pids []int
	testwait.For(t, 10*time.Second, fmt.Sprintf("%d process ids", n), func() bool {
		out, _, err := m.Read(id, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(out.Text)
		if len(f) < n {
			return false
		}
		pids = pids[:0]
		for _, s := range f {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("output %q", out.Text)
			}
			pids = append(pids, pid)
		}
		return true
	})
	return pids
}

// A Manager opened again finds a command still running, tells once the
// end of one that ended while none watched, and says lost one whose
// supervisor was killed.
func TestOpenAgain(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(t.TempDir(), "go")
	r := newRecorder()
	m := open(t, dir, r, Options{})
	long := start(t, m, "exec sleep 1000")
	waits := start(t, m, "while [ ! -e "+gate+" ]; do sleep 0.02; done; echo through")
	doomed := start(t, m, "exec sleep 1000")
	m.Close()

	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 10*time.Second, "the end of the command waiting, none watching", func() bool { return exists(filepath.Join(dir, waits.ID, endFile)) })
	var proc Proc
	if err := readJSON(filepath.Join(dir, doomed.ID, procFile), &proc); err != nil {
		t.Fatal(err)
	}
	if err := killPID(proc.Supervisor); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 10*time.Second, "the killed supervisor's lock let go", func() bool { held, _ := lockHeld(filepath.Join(dir, doomed.ID)); return !held })

	again := open(t, dir, r, Options{})
	got := map[string]Message{}
	for range 2 {
		msg := r.next(t)
		got[msg.ID] = msg
	}
	if !strings.Contains(got[waits.ID].Text, "exit status 0") || !strings.Contains(got[waits.ID].Text, "through") {
		t.Errorf("the end while none watched, told: %q", got[waits.ID].Text)
	}
	if !strings.Contains(got[doomed.ID].Text, "was lost") {
		t.Errorf("the command whose supervisor was killed, told: %q", got[doomed.ID].Text)
	}
	// Its command ends as its supervisor's death reaches it, a moment later.
	testwait.For(t, 10*time.Second, fmt.Sprintf("the command of a killed supervisor (pid %d) gone", proc.PID), func() bool { return !alive(proc.PID) })
	info, err := again.info(long.ID)
	if err != nil || info.Status != Running {
		t.Fatalf("the command still running: %+v, %v", info, err)
	}
	if _, err := again.Stop(context.Background(), long.ID); err != nil {
		t.Fatal(err)
	}
	again.sweep(context.Background())
	if len(r.msgs) != 2 {
		t.Fatalf("%d ends told, want 2", len(r.msgs))
	}
}

// A teller that fails has the end told again later, once.
func TestTellAgain(t *testing.T) {
	r := newRecorder()
	r.fail = errors.New("the endpoint is down")
	m := open(t, t.TempDir(), r, Options{})
	in := start(t, m, "true")
	testwait.For(t, 10*time.Second, "its end", func() bool { return exists(filepath.Join(m.dir(in.ID), endFile)) })
	m.sweep(context.Background())
	r.mu.Lock()
	r.fail = nil
	r.mu.Unlock()
	if msg := r.next(t); msg.ID != in.ID {
		t.Fatalf("told %s, want %s", msg.ID, in.ID)
	}
	m.sweep(context.Background())
	if len(r.msgs) != 1 {
		t.Fatalf("%d ends told, want 1", len(r.msgs))
	}
}

// Past MaxRunning a start is refused naming the bound; a command that
// can't start is refused with why, nothing of it kept.
func TestStartRefused(t *testing.T) {
	r := newRecorder()
	m := open(t, t.TempDir(), r, Options{MaxRunning: 2})
	start(t, m, "exec sleep 1000")
	start(t, m, "exec sleep 1000")
	if _, err := m.Start(context.Background(), Request{Thread: "link:test", Command: "x", Spec: shell("true")}); !errors.Is(err, ErrTooMany) {
		t.Fatalf("a third start: %v, want ErrTooMany", err)
	}
	m2 := open(t, t.TempDir(), r, Options{})
	_, err := m2.Start(context.Background(), Request{Thread: "link:test", Command: "nothing", Spec: []byte(`["/no/such/program"]`)})
	if err == nil || !strings.Contains(err.Error(), "could not be started") {
		t.Fatalf("a start of no program: %v", err)
	}
	if all, _ := m2.List(); len(all) != 0 {
		t.Fatalf("kept of a command not started: %+v", all)
	}
}

// A command has nothing of its server or supervisor: no descriptor but
// its standard three (the lock and the report pipe closed at its exec),
// no variable of the server's environment, and / as its folder unless
// its spec says one.
func TestCommandHoldsNothing(t *testing.T) {
	t.Setenv("LNK_SECRET_FOR_TEST", "s3cret")
	r := newRecorder()
	m := open(t, t.TempDir(), r, Options{})
	for _, line := range []string{"exec ls -l /proc/self/fd", "env; pwd"} {
		start(t, m, line)
	}
	fds, rest := r.next(t), r.next(t)
	if strings.Contains(fds.Text, "env; pwd") {
		fds, rest = rest, fds
	}
	if strings.Contains(rest.Text, "s3cret") || strings.Contains(rest.Text, "LNK_") {
		t.Errorf("the server's environment reached the command:\n%s", rest.Text)
	}
	if !strings.HasSuffix(rest.Text, "\n/\n") {
		t.Errorf("the command's folder is not /:\n%s", rest.Text)
	}
	// ls holds the folder it lists, 3; nothing else but the standard three.
	n := 0
	for _, line := range strings.Split(fds.Text, "\n") {
		if !strings.Contains(line, " -> ") {
			continue
		}
		n++
		if strings.Contains(line, lockFile) || strings.Contains(line, m.opts.Dir) {
			t.Errorf("the command holds its supervisor's descriptor: %s", line)
		}
	}
	if n != 4 {
		t.Errorf("the command holds %d descriptors, want its standard 3 (and ls's own):\n%s", n, fds.Text)
	}
}
