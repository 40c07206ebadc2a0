package background

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain makes the test binary a supervisor when started as one, as
// lnk's main does: each command's spec is its arguments, run as they are.
func TestMain(m *testing.M) {
	if IsSupervisor(os.Args) {
		os.Exit(Supervise(os.Args, plainBuilder))
	}
	if dir := os.Getenv(serverEnv); dir != "" {
		os.Exit(serveHelper(dir))
	}
	os.Exit(m.Run())
}

// plainBuilder runs a spec, a JSON array of arguments, unconfined: the
// tests of the supervisor alone (tools/run's run the sandbox's).
func plainBuilder(spec []byte) (*exec.Cmd, error) {
	var args []string
	if err := json.Unmarshal(spec, &args); err != nil {
		return nil, err
	}
	return exec.Command(args[0], args[1:]...), nil
}

// shell is a spec running line in sh.
func shell(line string) []byte {
	b, _ := json.Marshal([]string{"/bin/sh", "-c", line})
	return b
}

// recorder is a Teller keeping what it is told, in order.
type recorder struct {
	mu   sync.Mutex
	msgs []Message
	told chan Message
	fail error
}

func newRecorder() *recorder { return &recorder{told: make(chan Message, 1000)} }

func (r *recorder) Tell(_ context.Context, m Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.msgs = append(r.msgs, m)
	r.told <- m
	return nil
}

// next waits for the next message told.
func (r *recorder) next(t *testing.T) Message {
	t.Helper()
	select {
	case m := <-r.told:
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no end told in 20 s")
		return Message{}
	}
}

// open opens a Manager on dir, telling r, closed and every command it
// left running stopped when the test ends.
func open(t *testing.T, dir string, r Teller, opts Options) *Manager {
	t.Helper()
	opts.Dir, opts.Teller = dir, r
	if opts.Poll == 0 {
		opts.Poll = 50 * time.Millisecond
	}
	m, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		all, _ := m.List()
		for _, in := range all {
			if in.Status == Running {
				m.Stop(context.Background(), in.ID)
			}
		}
		m.Close()
	})
	return m
}

// start starts line in sh in conversation "link:test".
func start(t *testing.T, m *Manager, line string) Info {
	t.Helper()
	in, err := m.Start(context.Background(), Request{Thread: "link:test", Hops: 0, Command: line, Spec: shell(line)})
	if err != nil {
		t.Fatalf("start %q: %v", line, err)
	}
	return in
}

// alive says whether process pid runs (a zombie doesn't).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func itoa(n int) string { return strconv.Itoa(n) }

// killPID kills process pid with SIGKILL.
func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// serverEnv makes the test binary a run server of background commands
// alone, of the folder it names, for the tests of a server killed.
const serverEnv = "LNK_BACKGROUND_TEST_DIR"

// serveHelper is a run server of background commands alone, of the
// folder dir, driven by lines on its standard input (start <shell line>,
// stop <id>), each answered by a line (ok <id or status>, or err <why>).
// It tells each end by making a file named by the command's id in
// $LNK_BACKGROUND_TEST_TOLD, as the harness stores a message's id: once,
// a second telling of it answered already received, counted in a file of
// its own.
func serveHelper(dir string) int {
	m, err := Open(Options{Dir: dir, Teller: fileTeller(os.Getenv(toldEnv)), Poll: 20 * time.Millisecond, Grace: 100 * time.Millisecond, MaxRunning: 200})
	if err != nil {
		fmt.Println("err", err)
		return 1
	}
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		verb, arg, _ := strings.Cut(sc.Text(), " ")
		switch verb {
		case "start":
			in, err := m.Start(context.Background(), Request{Thread: "link:test", Command: arg, Spec: shell(arg)})
			if err != nil {
				fmt.Println("err", err)
				continue
			}
			fmt.Println("ok", in.ID)
		case "stop":
			in, err := m.Stop(context.Background(), arg)
			if err != nil {
				fmt.Println("err", err)
				continue
			}
			fmt.Println("ok", in.Status)
		}
	}
	return 0
}

// toldEnv names the folder fileTeller tells into.
const toldEnv = "LNK_BACKGROUND_TEST_TOLD"

// fileTeller tells an end by making a file of the command's id in its
// folder, once: one there already is a second telling, kept in
// <id>.again.
type fileTeller string

func (f fileTeller) Tell(_ context.Context, m Message) error {
	fh, err := os.OpenFile(filepath.Join(string(f), m.ID), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return os.WriteFile(filepath.Join(string(f), m.ID+".again"), nil, 0o600)
	}
	if err != nil {
		return err
	}
	_, err = fh.WriteString(m.Text)
	return errors.Join(err, fh.Close())
}
