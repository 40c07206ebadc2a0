package scheduler

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// The real Link Harness, built and run as a process of its own, reaches
// a scheduler served here over MCP at $LNK_SCHEDULER, its model the
// fake provider.

// built is the harness built once for the package's tests, in a folder
// TestMain removes.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// childEnv, when set, names the Link home of a scheduler run as a process
// of its own (kill_unix_test.go).
const childEnv = "LNK_SCHED_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(schedulerChild()) // kill_test.go
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildHarness builds lnk-link-harness, once for every test.
func buildHarness(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "team-harness-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "lnk-link-harness")
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		built.out, built.err = exec.Command(goTool, "build", "-o", built.bin, "../../cmd/lnk-link-harness").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("build lnk-link-harness: %v\n%s", built.err, built.out)
	}
	return built.bin
}

// lockedBuffer is a buffer written by a process's output and read by the
// test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// harnessProc is one run of the built harness.
type harnessProc struct {
	cmd    *exec.Cmd
	url    string
	agent  string // the agent the url is of, with --agents
	stderr *lockedBuffer
	exited chan struct{}
}

// startHarness starts the harness on home at a free port, its tools and
// provider from env, and reads its endpoint.
func startHarness(t testing.TB, bin, home, keyFile string, env map[string]string) *harnessProc {
	t.Helper()
	return startProc(t, bin, env, 1, "serve", "--home", home, "--port", "0", "--key-file", keyFile, "--model", "anthropic/claude-test")[0]
}

// startProc starts the harness with args and reads the endpoints it
// prints, n of them: a harnessProc each, of the one process.
func startProc(t testing.TB, bin string, env map[string]string, n int, args ...string) []*harnessProc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") || k == "OLLAMA_HOST" || strings.HasPrefix(k, "LNK_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &harnessProc{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, n)
	go func() {
		sc := bufio.NewScanner(out)
		for i := 0; i < n && sc.Scan(); i++ {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() {
		}
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.kill)
	var all []*harnessProc
	timeout := time.After(30 * time.Second)
	for range n {
		select {
		case l, ok := <-lines:
			if !ok || !strings.HasPrefix(l, "endpoint ") {
				t.Fatalf("the harness said %q: %s", l, p.stderr.String())
			}
			one := *p
			one.url, one.agent, _ = strings.Cut(strings.TrimPrefix(l, "endpoint "), " ")
			all = append(all, &one)
		case <-timeout:
			t.Fatalf("the harness didn't listen: %s", p.stderr.String())
		}
	}
	return all
}

// kill SIGKILLs the harness and waits for it to be gone.
func (p *harnessProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// selfAt is the agent's own endpoint, which a test moves when it starts
// its harness again.
type selfAt struct {
	mu sync.Mutex
	ep Endpoint
}

func (s *selfAt) set(url string, key []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ep = Endpoint{URL: url, Key: key, Agent: contract.DefaultAgent}
}

func (s *selfAt) get(context.Context) (Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ep, nil
}

// serveTeam serves t's calls over Streamable HTTP on 127.0.0.1, its
// address what $LNK_SCHEDULER names.
func serveTeam(tb testing.TB, t *Team) string {
	tb.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "link-scheduler-test", Version: "1"}, &mcp.ServerOptions{Instructions: TeamInstructions})
	AddTeamTools(s, t)
	return serveMCP(tb, s)
}

// serveMCP serves s over Streamable HTTP on 127.0.0.1.
func serveMCP(tb testing.TB, s *mcp.Server) string {
	tb.Helper()
	h := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	tb.Cleanup(h.Close)
	return h.URL
}

// events are the events of thread in the main agent's conversations at
// home.
func events(tb testing.TB, home, thread string) []store.Event {
	tb.Helper()
	return agentEvents(tb, home, contract.DefaultAgent, thread)
}

// agentEvents are the events of thread in agent's conversations at home.
func agentEvents(tb testing.TB, home, agent, thread string) []store.Event {
	tb.Helper()
	p, err := store.For(home, agent)
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := log.Open(p.Chats()).Read(context.Background(), thread, 1)
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}

// messagesFrom are the messages of evs from senders starting prefix.
func messagesFrom(evs []store.Event, prefix string) []store.Event {
	var out []store.Event
	for _, e := range evs {
		if e.Kind == store.KindMessage && strings.HasPrefix(e.From, prefix) {
			out = append(out, e)
		}
	}
	return out
}
