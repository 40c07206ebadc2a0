package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lnk-dev/link/contract"
)

// proc is a program lnk measure started: the harness or the floor.
type proc struct {
	cmd    *exec.Cmd
	began  time.Time
	lines  chan string // its output, a line each
	exited chan struct{}

	mu     sync.Mutex
	errOut strings.Builder
}

// startProc starts bin with args, its environment env.
func startProc(ctx context.Context, bin string, args, env []string) (*proc, error) {
	p := &proc{lines: make(chan string, 128), exited: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, bin, args...)
	p.cmd.Env = env
	p.cmd.Stderr = p
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.began = time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		defer close(p.exited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default: // nobody reads past the lines it waits for
			}
		}
		close(p.lines)
		io.Copy(io.Discard, out)
		p.cmd.Wait()
	}()
	return p, nil
}

// Write keeps what the program says on stderr, for an error, bounded.
func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.errOut.Len() < 64<<10 {
		p.errOut.Write(b)
	}
	return len(b), nil
}

func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.TrimSpace(p.errOut.String())
}

// pid is the program's process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// waitLines waits for n lines starting with prefix and returns them.
func (p *proc) waitLines(ctx context.Context, n int, prefix string) ([]string, error) {
	var got []string
	t := time.NewTimer(60 * time.Second)
	defer t.Stop()
	for len(got) < n {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return nil, fmt.Errorf("%s ended: %s", p.cmd.Path, p.stderr())
			}
			if strings.HasPrefix(l, prefix) {
				got = append(got, l)
			}
		case <-t.C:
			return nil, fmt.Errorf("%s didn't say %q in a minute: %s", p.cmd.Path, prefix, p.stderr())
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return got, nil
}

// stop ends the program as a signal does, killing it after 10 s.
func (p *proc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startToHealth starts a program listening at port and times its start
// until /health there answers 200, asking every 200 µs.
func startToHealth(ctx context.Context, bin string, args, env []string, port int) (*proc, time.Duration, error) {
	p, err := startProc(ctx, bin, args, env)
	if err != nil {
		return nil, 0, err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port) + contract.HealthPath
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := client.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p, time.Since(p.began), nil
			}
		}
		select {
		case <-p.exited:
			return nil, 0, fmt.Errorf("%s ended before /health answered: %s", bin, p.stderr())
		case <-ctx.Done():
			p.stop()
			return nil, 0, ctx.Err()
		case <-time.After(200 * time.Microsecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, 0, fmt.Errorf("%s's /health didn't answer in a minute", bin)
		}
	}
}

// idleRSS waits idle, then samples pid's memory samples times and gives
// the median of each measure; rss -1 when the system doesn't say.
func idleRSS(ctx context.Context, pid, samples int, idle time.Duration) (memory, error) {
	if err := sleepCtx(ctx, idle); err != nil {
		return memory{}, err
	}
	var rss, anon, file []int64
	for i := range samples {
		if i > 0 {
			if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
				return memory{}, err
			}
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if errors.Is(err, os.ErrNotExist) && i == 0 && runtime.GOOS != "linux" {
			return memory{rss: -1}, nil
		}
		if err != nil {
			return memory{}, fmt.Errorf("read the harness's memory: %w", err)
		}
		m, err := parseStatus(b)
		if err != nil {
			return memory{}, err
		}
		rss, anon, file = append(rss, m.rss), append(anon, m.anon), append(file, m.file)
	}
	return memory{rss: median(rss), anon: median(anon), file: median(file)}, nil
}

func median[T int64 | float64 | time.Duration](v []T) T {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// memory is a process's resident memory: all of it (VmRSS), its own
// (RssAnon) and the program's file pages (RssFile), shared by every
// process running the same program; bytes.
type memory struct {
	rss, anon, file int64
}

// parseStatus reads VmRSS, RssAnon and RssFile from /proc/<pid>/status,
// in bytes; VmRSS is needed, the others are 0 when absent.
func parseStatus(status []byte) (memory, error) {
	var m memory
	seen := false
	for _, l := range strings.Split(string(status), "\n") {
		name, rest, ok := strings.Cut(l, ":")
		var into *int64
		switch name {
		case "VmRSS":
			into, seen = &m.rss, true
		case "RssAnon":
			into = &m.anon
		case "RssFile":
			into = &m.file
		}
		if !ok || into == nil {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return m, fmt.Errorf("read %s: %q is not a size in kB", name, strings.TrimSpace(rest))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<40 {
			return m, fmt.Errorf("read %s: %q is not a size in kB", name, f[0])
		}
		*into = kb << 10
	}
	if !seen {
		return m, errors.New("read VmRSS: the status has none")
	}
	return m, nil
}

// loadAvg is the machine's load average over 1, 5 and 15 minutes, or
// "unknown".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
