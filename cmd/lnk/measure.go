package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lnk-dev/link/acp"
)

func init() {
	register(command{
		words:   "measure",
		summary: "measure Link Harness: per-message overhead (p50, p99) and an idle agent's memory",
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			return runMeasure(ctx, args, stdout, stderr)
		},
	})
}

const measureUsage = `usage: lnk measure [flags]

Starts Link Harness (lnk-link-harness serve) for one agent on a home of
its own, with the offline model, which answers at once, and measures:

  per message: from a WebSocket's open (the proof, then the upgrade) to the
  prompt answered, over --messages messages: the median, the 99th
  percentile, the mean, messages a second;
  idle memory: the process's resident memory (VmRSS), the median of
  --samples samples, once started and after the messages.

Times on a shared machine are noisy: the machine's load is printed beside
them. Targets: a median under 2 ms, an idle agent under 20 MB.

flags:
`

// Targets of Link Harness's measures.
const (
	targetP50 = 2 * time.Millisecond
	targetRSS = 20 << 20
)

// measureTurnsPerThread is how many messages one conversation gets before
// the next begins, so each turn reads about as much.
const measureTurnsPerThread = 32

func runMeasure(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("lnk measure", measureUsage, stderr)
	bin := fs.String("harness", "", "the lnk-link-harness program (default: the one on $PATH, else built from this module with go build)")
	home := fs.String("home", "", "the Link home it runs on (default: a new folder, removed after)")
	messages := fs.Int("messages", 500, "how many messages to time")
	samples := fs.Int("samples", 5, "how many samples of memory to take each time")
	idle := fs.Duration("idle", 6*time.Second, "how long the agent is left idle before its memory is sampled (past the 5 s after which an idle harness gives its free memory back)")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if fs.NArg() > 0 || *messages < 1 || *samples < 1 || *idle < 0 {
		fmt.Fprintln(stderr, "lnk measure: --messages and --samples are at least 1, --idle not negative, and it takes no words")
		return 2
	}
	if *bin == "" {
		path, err := findHarness(ctx, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "lnk measure: %v\n", err)
			return 1
		}
		*bin = path
	}
	if *home == "" {
		dir, err := os.MkdirTemp("", "lnk-measure-")
		if err != nil {
			fmt.Fprintf(stderr, "lnk measure: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		*home = dir
	}
	m, err := measure(ctx, *bin, *home, *messages, *samples, *idle)
	if err != nil {
		fmt.Fprintf(stderr, "lnk measure: %v\n", err)
		return 1
	}
	m.print(stdout)
	return 0
}

// measures are what lnk measure found.
type measures struct {
	pid                int
	messages           int
	p50, p99, mean     time.Duration
	perSecond          float64
	rssStart, rssAfter memory // rss -1 when the system doesn't say
	samples            int
	loadStart, loadEnd string
}

func (m measures) print(w io.Writer) {
	fmt.Fprintf(w, "Link Harness (lnk-link-harness, pid %d), one agent, the offline model answering at once\n", m.pid)
	fmt.Fprintf(w, "machine: %s/%s, %d CPUs, load %s at the start, %s at the end\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), m.loadStart, m.loadEnd)
	fmt.Fprintf(w, "per message, WebSocket open to prompt answered (%d messages): p50 %s, p99 %s, mean %s, %.0f messages/s\n",
		m.messages, msText(m.p50), msText(m.p99), msText(m.mean), m.perSecond)
	if m.rssStart.rss < 0 {
		fmt.Fprintln(w, "idle memory of one agent: not measured (the system has no /proc/<pid>/status)")
	} else {
		fmt.Fprintf(w, "idle memory of one agent (VmRSS, median of %d): %s started, %s after %d messages\n", m.samples, m.rssStart, m.rssAfter, m.messages)
	}
	fmt.Fprintf(w, "targets: p50 under %s: %s; idle memory under %s: %s\n", msText(targetP50), yesNo(m.p50 < targetP50), mbText(targetRSS), yesNo(m.rssAfter.rss >= 0 && m.rssAfter.rss < targetRSS && m.rssStart.rss < targetRSS))
}

// memory is a process's resident memory: all of it (VmRSS), its own
// (RssAnon) and the program's file pages (RssFile), shared by every
// process running the same program; bytes.
type memory struct {
	rss, anon, file int64
}

func (m memory) String() string {
	return fmt.Sprintf("%s (%s its own, %s of the program's file, shared)", mbText(m.rss), mbText(m.anon), mbText(m.file))
}

func msText(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + " ms" }
func mbText(b int64) string         { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MB" }

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// findHarness finds lnk-link-harness on $PATH, else builds it from this
// module into a folder of its own.
func findHarness(ctx context.Context, stderr io.Writer) (string, error) {
	if path, err := exec.LookPath("lnk-link-harness"); err == nil {
		return path, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("no lnk-link-harness on $PATH and no go to build it: say --harness")
	}
	dir, err := os.MkdirTemp("", "lnk-measure-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "lnk-link-harness")
	fmt.Fprintln(stderr, "lnk measure: building lnk-link-harness (CGO_ENABLED=0 go build github.com/lnk-dev/link/cmd/lnk-link-harness)")
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, "github.com/lnk-dev/link/cmd/lnk-link-harness")
	// As it is shipped: without cgo, a static program that maps no libc.
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build lnk-link-harness: %w: %s (say --harness)", err, strings.TrimSpace(string(out)))
	}
	return bin, nil
}

// measure runs the harness at bin on home and measures it.
func measure(ctx context.Context, bin, home string, messages, samples int, idle time.Duration) (measures, error) {
	m := measures{messages: messages, samples: samples, loadStart: loadAvg()}
	key, err := ensureKey(filepath.Join(home, "measure.key"))
	if err != nil {
		return m, err
	}
	cmd := exec.CommandContext(ctx, bin, "serve", "--home", home, "--port", "0", "--key-file", filepath.Join(home, "measure.key"), "--model", "offline")
	cmd.Env = measureEnv()
	var errOut strings.Builder
	cmd.Stderr = &errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		return m, err
	}
	if err := cmd.Start(); err != nil {
		return m, fmt.Errorf("start %s: %w", bin, err)
	}
	m.pid = cmd.Process.Pid
	exited := make(chan struct{})
	line := make(chan string, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		io.Copy(io.Discard, out)
		cmd.Wait()
	}()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	defer stop()
	var url string
	select {
	case l, ok := <-line:
		if !ok || !strings.HasPrefix(l, "endpoint ") {
			return m, fmt.Errorf("%s said %q: %s", bin, l, errOut.String())
		}
		url = strings.TrimPrefix(l, "endpoint ")
	case <-time.After(30 * time.Second):
		return m, fmt.Errorf("%s didn't listen", bin)
	}
	a := &agentConn{url: url, key: key, agent: "main"}

	if m.rssStart, err = idleRSS(ctx, m.pid, samples, idle); err != nil {
		return m, err
	}
	// A few messages first, so what's made once is made.
	for i := range 5 {
		if _, err := timeMessage(ctx, a, "link:warm", i); err != nil {
			return m, err
		}
	}
	times := make([]time.Duration, 0, messages)
	began := time.Now()
	for i := range messages {
		d, err := timeMessage(ctx, a, "link:measure-"+strconv.Itoa(i/measureTurnsPerThread), i)
		if err != nil {
			return m, err
		}
		times = append(times, d)
	}
	total := time.Since(began)
	slices.Sort(times)
	var sum time.Duration
	for _, d := range times {
		sum += d
	}
	m.p50, m.p99 = nearestRank(times, 50), nearestRank(times, 99)
	m.mean = sum / time.Duration(len(times))
	m.perSecond = float64(len(times)) / total.Seconds()
	if m.rssAfter, err = idleRSS(ctx, m.pid, samples, idle); err != nil {
		return m, err
	}
	m.loadEnd = loadAvg()
	return m, nil
}

// measureEnv is the harness's environment: this one's without a provider
// key or Link's own variables, so it runs the offline model alone.
func measureEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") || k == "OLLAMA_HOST" || strings.HasPrefix(k, "LNK_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// timeMessage sends one message as a bridge does and times it, from the
// connection's open to the prompt answered.
func timeMessage(ctx context.Context, a *agentConn, thread string, i int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	conn, err := a.dial(ctx, 0)
	if err != nil {
		return 0, err
	}
	c := acp.NewClient(ctx, conn, nil)
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return 0, err
	}
	if err := c.Resume(ctx, thread); err != nil {
		return 0, err
	}
	if _, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: "message " + strconv.Itoa(i)}}, nil); err != nil {
		return 0, fmt.Errorf("message %d: %w", i, err)
	}
	return time.Since(start), nil
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

func median(v []int64) int64 {
	slices.Sort(v)
	return v[len(v)/2]
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

// nearestRank is the pth percentile of sorted, by nearest rank.
func nearestRank(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, min(len(sorted)-1, i-1))]
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
