//go:build unix

package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/cmd/internal/floor"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/model/scripted"
)

// envConnChild makes the test binary BenchmarkConnection's servers.
const envConnChild = "LNK_TEST_CONN_CHILD"

// BenchmarkConnection is what a message's connection costs Link Harness's
// process besides its turn: the proof, the upgrade, initialize,
// session/resume (with its available_commands_update) and the close, no
// prompt, through the real endpoint, dispatch and harness (Start), beside
// the same against a floor (net/http and bare coder/websocket answering
// the same requests, as lnk measure's floor-server does). Both are served
// by one child process (TestConnectionChild), the clients are this one:
// the two take turns, a batch of conc connections at once each, and the
// child's CPU and allocations over each batch are counted to its side.
// The figures are a connection's, harness/floor their ratio.
func BenchmarkConnection(b *testing.B) {
	for _, conc := range []int{1, 64} {
		b.Run(strconv.Itoa(conc), func(b *testing.B) {
			child := startConnChild(b)
			ctx := context.Background()
			threads := make([]string, conc)
			for g := range threads {
				threads[g] = "link:conn-" + strconv.Itoa(g)
			}
			var sides [2]connCost // the harness's, the floor's
			batch := func(side int) {
				before := child.cost()
				errs := make([]error, conc)
				var wg sync.WaitGroup
				for g := range conc {
					wg.Add(1)
					go func() {
						defer wg.Done()
						errs[g] = openResumeClose(ctx, child.urls[side], threads[g])
					}()
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						b.Fatal(err)
					}
				}
				sides[side].add(child.cost().less(before), conc)
			}
			batch(0) // each side warmed, untimed
			batch(1)
			sides = [2]connCost{}
			b.ResetTimer()
			for i := 0; i < b.N; i += 2 * conc {
				first := i / (2 * conc) % 2
				batch(first)
				batch(1 - first)
			}
			b.StopTimer()
			h, f := sides[0], sides[1]
			b.ReportMetric(h.cpuUS(), "harness-cpu-us/conn")
			b.ReportMetric(f.cpuUS(), "floor-cpu-us/conn")
			b.ReportMetric(h.cpuUS()/f.cpuUS(), "cpu-harness/floor")
			b.ReportMetric(h.allocs(), "harness-allocs/conn")
			b.ReportMetric(f.allocs(), "floor-allocs/conn")
		})
	}
}

// connCost is what a side's connections cost the child, summed.
type connCost struct {
	cpu     time.Duration
	mallocs uint64
	n       int
}

func (c connCost) less(o connCost) connCost {
	return connCost{cpu: c.cpu - o.cpu, mallocs: c.mallocs - o.mallocs}
}

func (c *connCost) add(o connCost, n int) {
	c.cpu += o.cpu
	c.mallocs += o.mallocs
	c.n += n
}

// cpuUS is a connection's CPU, in microseconds.
func (c connCost) cpuUS() float64 {
	return float64(c.cpu) / float64(time.Microsecond) / float64(max(c.n, 1))
}

// allocs is a connection's allocations.
func (c connCost) allocs() float64 { return float64(c.mallocs) / float64(max(c.n, 1)) }

// connChild is BenchmarkConnection's child process: its two servers'
// addresses (the harness's, the floor's), and its costs on asking.
type connChild struct {
	urls [2]string
	in   io.Writer
	out  *bufio.Scanner
	b    *testing.B
}

// cost asks the child what it has cost so far.
func (c *connChild) cost() connCost {
	if _, err := io.WriteString(c.in, "cost\n"); err != nil {
		c.b.Fatal(err)
	}
	var cpu int64
	var cc connCost
	if !c.out.Scan() {
		c.b.Fatal("the child ended")
	}
	if _, err := fmt.Sscan(c.out.Text(), &cpu, &cc.mallocs); err != nil {
		c.b.Fatal(err)
	}
	cc.cpu = time.Duration(cpu)
	return cc
}

// startConnChild starts TestConnectionChild in a process of its own,
// ended with the benchmark.
func startConnChild(b *testing.B) *connChild {
	cmd := exec.Command(os.Args[0], "-test.run=^TestConnectionChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envConnChild+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	c := &connChild{in: in, out: bufio.NewScanner(out), b: b}
	for c.out.Scan() {
		if u, ok := strings.CutPrefix(c.out.Text(), "urls "); ok {
			h, f, _ := strings.Cut(u, " ")
			c.urls = [2]string{h, f}
			return c
		}
	}
	b.Fatal("the child said no urls")
	return nil
}

// TestConnectionChild is the servers BenchmarkConnection measures, run in
// a process of its own: Link Harness (Start, the offline model) and the
// floor. It prints their addresses, then answers each line "cost" on its
// standard input with its CPU so far (ns) and its allocations; without
// its environment it does nothing.
func TestConnectionChild(t *testing.T) {
	if os.Getenv(envConnChild) == "" {
		return
	}
	s, err := Start(t.Context(), Config{Home: t.TempDir(), Key: testKey, Model: scripted.OfflineName})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Println("urls", s.URL(), startFloor(t, testKey))
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Println(int64(cpuTime()), ms.Mallocs)
	}
}

// openResumeClose opens a connection to url as a bridge does (the proof,
// the upgrade), initializes it, resumes thread and closes it.
func openResumeClose(ctx context.Context, url, thread string) error {
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: testKey})
	if err != nil {
		return err
	}
	c := acp.NewClient(ctx, conn, nil)
	if _, err := c.Initialize(ctx); err != nil {
		c.Close()
		return err
	}
	if err := c.Resume(ctx, thread); err != nil {
		c.Close()
		return err
	}
	return c.Close()
}

// cpuTime is the CPU this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startFloor serves the floor (cmd/internal/floor, lnk measure's
// floor-server's) on a free loopback port until the test ends, and gives
// its endpoint's address.
func startFloor(t testing.TB, key []byte) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: floor.Handler(key), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return contract.EndpointURL(ln.Addr().(*net.TCPAddr).Port)
}
