package storetest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// The environment of a test binary run again as a child process by Crash
// or Contend: what it is to do, the store's folder, and its name.
const (
	envChild = "LNK_STORETEST_CHILD"
	envDir   = "LNK_STORETEST_DIR"
	envName  = "LNK_STORETEST_NAME"
)

// The children's modes.
const (
	modeCrash   = "crash"   // append until killed
	modeHold    = "hold"    // take the lease, begin a turn, wait to be killed
	modeContend = "contend" // take turns with another process
)

// childLife bounds a child's life, should its parent go without killing it.
const childLife = time.Minute

// childMode is the mode this process was started in as a child, "" in
// the test's own process.
func childMode() string { return os.Getenv(envChild) }

// child is a test binary started again to run only t's test in mode.
type child struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	lines  chan string   // its stdout's whole lines, closed at its end
	exited chan struct{} // closed once it has exited and been waited for
	err    error         // its exit, once exited is closed
	// rest is the lines it wrote that were not yet read when it was
	// killed.
	rest []string
}

// startChild runs this test binary again, only t's test, in mode, on the
// store in dir, as name.
func startChild(t *testing.T, mode, dir, name string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1")
	cmd.Env = append(os.Environ(), envChild+"="+mode, envDir+"="+dir, envName+"="+name)
	c := &child{cmd: cmd, lines: make(chan string, 1024), exited: make(chan struct{})}
	cmd.Stderr = &c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				// A line the child was killed in the middle of is no line.
				io.Copy(io.Discard, r)
				break
			}
			c.lines <- strings.TrimSuffix(line, "\n")
		}
		close(c.lines)
		c.err = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(c.kill)
	return c
}

// kill kills the child with SIGKILL, and waits until it has exited and
// every line it wrote is read, those not yet read kept in rest.
func (c *child) kill() {
	c.cmd.Process.Kill()
	for line := range c.lines {
		c.rest = append(c.rest, line)
	}
	<-c.exited
}

// wait waits for the child to end by itself, for at most d.
func (c *child) wait(d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case _, ok := <-c.lines:
			if !ok {
				<-c.exited
				return c.err
			}
		case <-timer.C:
			c.kill()
			return fmt.Errorf("still running after %v", d)
		}
	}
}

// runPattern is the -test.run pattern that selects the test named name,
// and only it: each level of a subtest's name matched whole.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// orphaned says whether this child's parent has gone, or it has lived
// its bound: then it ends itself.
func orphaned(ppid int, start time.Time) bool {
	return os.Getppid() != ppid || time.Since(start) > childLife
}

// closeStore closes c if it holds files or connections.
func closeStore(c store.Conversations) {
	if cl, ok := c.(store.Closer); ok {
		cl.Close()
	}
}

// sameLines fails t unless got's events have, in order, the lines of
// want's, their times in UTC: byte for byte what was written.
func sameLines(t testing.TB, what string, got, want []store.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events (%s), want %d (%s)", what, len(got), seqs(got), len(want), seqs(want))
	}
	for i := range want {
		a, err := store.MarshalLine(store.InUTC(got[i]))
		if err != nil {
			t.Fatal(err)
		}
		b, err := store.MarshalLine(store.InUTC(want[i]))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: event %d is\n%s\nwant\n%s", what, i, a, b)
		}
	}
}
