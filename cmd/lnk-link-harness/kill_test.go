package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/cmd/internal/drivers/driverstest"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
)

// The kill loop: the real program, built, SIGKILLed at a random point of
// a message's turn (before it has the message, mid-round, mid-call,
// mid-stream, as it answers) again and again, and started again on the
// same store each time. Every message it had gets its answer handed over
// exactly once (streamed to a caller told the prompt's answer, or
// recovered, never both, never two), no event number is written twice,
// and no tool call is made twice.

const (
	killIterations = 12
	killBudget     = 60 * time.Second
)

// buildHarness builds lnk-link-harness into a folder of the test's.
func buildHarness(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lnk-link-harness")
	cmd := exec.Command(driverstest.GoTool(), "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build lnk-link-harness: %v\n%s", err, out)
	}
	return bin
}

// harnessProc is one run of the built program.
type harnessProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	exited chan struct{} // closed once it has exited
	err    error         // how it exited
}

// startProc starts the program on port 0 and reads its endpoint; extra
// flags go after the others (--model offline over anthropic/claude-test).
func startProc(t *testing.T, bin, home, keyFile string, env []string, extra ...string) *harnessProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--home", home, "--port", "0", "--key-file", keyFile, "--model", "anthropic/claude-test"}, extra...)...)
	cmd.Env = env
	p := &harnessProc{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		for sc.Scan() {
		}
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.kill() })
	select {
	case l, ok := <-line:
		if !ok || !strings.HasPrefix(l, "endpoint ") {
			t.Fatalf("the program said %q: %s", l, p.stderr.String())
		}
		p.url = strings.TrimPrefix(l, "endpoint ")
	case <-time.After(20 * time.Second):
		t.Fatalf("the program didn't listen: %s", p.stderr.String())
	}
	return p
}

// kill SIGKILLs the process and waits for it.
func (p *harnessProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stop ends the process as a signal from its owner does, gracefully: it
// answers what it has open and lets its turns end.
func (p *harnessProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.err != nil {
			t.Fatalf("stopped with %v: %s", p.err, p.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("didn't stop")
	}
}

// outcome is what a bridge saw of one message.
type outcome struct {
	thread    string
	taken     bool   // _link/taken came
	responded bool   // the prompt was answered: the answer was handed over
	text      string // what streamed

	killedAfter time.Duration // how long after the message was sent
}

// bridgeSend sends text as a bridge does and says what it saw.
func bridgeSend(url string, key []byte, thread, text string) outcome {
	o := outcome{thread: thread}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key})
	if err != nil {
		return o
	}
	var mu sync.Mutex
	var got strings.Builder
	c := acp.NewClient(ctx, conn, func(method string, params json.RawMessage) {
		mu.Lock()
		defer mu.Unlock()
		if method == contract.MethodTaken {
			o.taken = true
			return
		}
		var n acp.Notification
		var u acp.Update
		if json.Unmarshal(params, &n) == nil && json.Unmarshal(n.Update, &u) == nil && u.Content != nil {
			got.WriteString(u.Content.Text)
		}
	})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return o
	}
	if err := c.Resume(ctx, thread); err != nil {
		return o
	}
	_, err = c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil)
	mu.Lock()
	defer mu.Unlock()
	o.responded = err == nil
	o.text = got.String()
	return o
}

// recovered is what _link/recover handed over, by thread, then id.
type recovered map[string]map[string]string

// collect asks _link/recover two-phase and records what it hands over;
// with done, it lets it go.
func (r recovered) collect(t *testing.T, url string, key []byte, done bool) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ask := func(p contract.RecoverParams) (contract.RecoverResult, error) {
		conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key})
		if err != nil {
			return contract.RecoverResult{}, err
		}
		c := acp.NewClient(ctx, conn, nil)
		defer c.Close()
		if _, err := c.Initialize(ctx); err != nil {
			return contract.RecoverResult{}, err
		}
		return c.Recover(ctx, p)
	}
	res, err := ask(contract.RecoverParams{TwoPhase: true})
	if err != nil {
		return 0, err
	}
	var ids []string
	for _, a := range res.Answers {
		if r[a.Thread] == nil {
			r[a.Thread] = map[string]string{}
		}
		if old, ok := r[a.Thread][a.ID]; ok && old != a.Text {
			t.Errorf("answer %s of %s handed over again changed", a.ID, a.Thread)
		}
		r[a.Thread][a.ID] = a.Text
		ids = append(ids, a.ID)
	}
	if done && len(ids) > 0 {
		if _, err := ask(contract.RecoverParams{Done: ids}); err != nil {
			return len(ids), err
		}
	}
	return len(ids), nil
}

// counter is an MCP tool, counter__count, counting the calls it gets by
// the token each carries.
type counter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *counter) server(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "count", Description: "count a call", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Call string `json:"call"`
			}
			json.Unmarshal(req.Params.Arguments, &in)
			c.mu.Lock()
			c.calls[in.Call]++
			c.mu.Unlock()
			// Long enough for a kill to land mid-call.
			select {
			case <-time.After(60 * time.Millisecond):
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "counted " + in.Call}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// childEnv is the program's environment: this one's without any provider
// key, and the test's.
func childEnv(extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") || k == "OLLAMA_HOST" || strings.HasPrefix(k, "LNK_") {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

func TestKillLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real program")
	}
	bin := buildHarness(t)
	fake := fakeprovider.New()
	defer fake.Close()
	tool := &counter{calls: map[string]int{}}
	home := t.TempDir()
	key := []byte(testKey)
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, append(key, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	env := childEnv(map[string]string{
		"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL(),
		"LNK_TOOL_COUNTER": tool.server(t),
		"LNK_LEASE_TTL":    "1500ms", // a dead process's turn is taken over soon
	})
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))

	proc := startProc(t, bin, home, keyFile, env)
	got := recovered{}
	var outcomes []outcome
	began := time.Now()
	for i := 0; i < killIterations && time.Since(began) < killBudget; i++ {
		thread := fmt.Sprintf("telegram:%d", 100+i)
		// A round of calls, then an answer streamed slowly, twice over: a
		// crashed turn finished after takes the next ones.
		for k := range 2 {
			fake.Script(
				fakeprovider.Turn{Text: "Looking.", Delay: 25 * time.Millisecond, ToolCalls: []fakeprovider.ToolCall{
					{Name: "counter__count", Input: fmt.Sprintf(`{"call":"m%d-%d-a"}`, i, k)},
					{Name: "counter__count", Input: fmt.Sprintf(`{"call":"m%d-%d-b"}`, i, k)},
				}},
				fakeprovider.Turn{Text: fmt.Sprintf("The answer to message %d, streamed in pieces.", i), Delay: 40 * time.Millisecond},
			)
		}
		res := make(chan outcome, 1)
		url := proc.url
		go func() { res <- bridgeSend(url, key, thread, fmt.Sprintf("message %d", i)) }()
		// Mostly somewhere in the turn, sometimes before the harness has
		// the message: the pause is the thing tested, a kill at a random
		// moment, not a wait for work.
		after := time.Duration(rng.IntN(900)) * time.Millisecond
		if rng.IntN(6) == 0 {
			after = time.Duration(rng.IntN(3000)) * time.Microsecond
		}
		time.Sleep(after)
		proc.kill()
		o := <-res
		o.killedAfter = after
		outcomes = append(outcomes, o)
		proc = startProc(t, bin, home, keyFile, env)
		// What's kept so far, let go or not (then handed over again).
		if _, err := got.collect(t, proc.url, key, rng.IntN(2) == 0); err != nil {
			t.Logf("recover after kill %d: %v", i, err)
		}
	}
	t.Logf("%d kills in %v", len(outcomes), time.Since(began).Round(time.Millisecond))

	// Let the last process finish every turn the kills left, then stop it
	// gracefully, so each answer kept is on the disk.
	testwait.For(t, 30*time.Second, "every turn the kills left finished", func() bool {
		got.collect(t, proc.url, key, true)
		return unanswered(t, home, outcomes) == 0
	})
	proc.stop(t)
	proc = startProc(t, bin, home, keyFile, env)
	if _, err := got.collect(t, proc.url, key, true); err != nil {
		t.Fatal(err)
	}
	if n, err := got.collect(t, proc.url, key, true); n != 0 || err != nil {
		t.Fatalf("%d answers handed over after they were let go (%v)", n, err)
	}
	proc.stop(t)

	checkKillLoop(t, home, outcomes, got, tool)
}

// unanswered counts the messages had whose turn hasn't answered.
func unanswered(t *testing.T, home string, outcomes []outcome) int {
	n := 0
	for _, o := range outcomes {
		ev := readEvents(t, home, o.thread)
		if len(ev) > 0 && stillWaiting(ev) {
			n++
		}
	}
	return n
}

// stillWaiting says whether a conversation's last message has no final
// answer that saw it.
func stillWaiting(ev []store.Event) bool {
	last := -1
	for i := len(ev) - 1; i >= 0; i-- {
		if ev[i].Kind == store.KindMessage {
			last = i
			break
		}
	}
	if last < 0 {
		return false
	}
	for _, e := range ev[last+1:] {
		if store.FinalAnswer(e) && (e.Seen == 0 || e.Seen >= ev[last].Seq) {
			return false
		}
	}
	return true
}

// checkKillLoop proves the loop's promises from what the bridges saw,
// what recover handed over, the events and the tool's count.
func checkKillLoop(t *testing.T, home string, outcomes []outcome, got recovered, tool *counter) {
	t.Helper()
	var streamed, recoveredN, notHad, twice int
	callIDs := map[string]string{}
	for _, o := range outcomes {
		ev := readEvents(t, home, o.thread)
		answers := got[o.thread]
		// No event number written twice, none skipped.
		for i, e := range ev {
			if e.Seq != int64(i+1) {
				t.Errorf("%s: event %d is numbered %d", o.thread, i+1, e.Seq)
			}
		}
		results := map[string]int{}
		for _, e := range ev {
			for _, c := range e.Calls {
				if other, ok := callIDs[c.ID]; ok {
					t.Errorf("call %s asked in %s and %s", c.ID, other, o.thread)
				}
				callIDs[c.ID] = o.thread
			}
			if e.Kind == store.KindToolResult {
				results[e.CallID]++
				if results[e.CallID] > 1 {
					t.Errorf("%s: call %s answered twice", o.thread, e.CallID)
				}
			}
		}
		t.Logf("%s: killed %v after it was sent: taken %v, answered %v, %d recovered, %d events", o.thread, o.killedAfter, o.taken, o.responded, len(answers), len(ev))
		switch {
		case len(ev) == 0:
			// The kill came before the harness had the message: nothing
			// to answer, and nothing answered. A message it told
			// _link/taken for is in its conversation, whatever the kill
			// cut (each is a new conversation's first: its folder made
			// ahead, taken, or made).
			if o.taken {
				t.Errorf("%s: taken, yet its conversation holds no event", o.thread)
			}
			if o.responded || len(answers) > 0 {
				t.Errorf("%s: never had, yet answered (%v, %d recovered)", o.thread, o.responded, len(answers))
			}
			notHad++
		case len(answers) > 1:
			t.Errorf("%s: %d answers handed over: %v", o.thread, len(answers), answers)
		case o.responded && len(answers) == 1 && onlyText(answers) == o.text:
			// The kill came after the prompt's answer was written, before
			// the answer kept while it was told was let go: handed over
			// twice, the window of one small file's write.
			twice++
			t.Logf("%s: told, and recovered too: the kill came between the two", o.thread)
		case o.responded && len(answers) == 1:
			t.Errorf("%s: streamed to its caller and recovered too", o.thread)
		case o.responded:
			streamed++
		case len(answers) == 1:
			recoveredN++
		case finalText(ev) != "" && o.text == finalTurnText(ev):
			// The whole answer streamed, and the kill came between its
			// last event and the prompt's answer: it is kept from before
			// its event is until the caller is told, so this is a loss.
			t.Errorf("%s: the whole answer streamed, the prompt's answer cut off by the kill, and nothing recovered", o.thread)
		default:
			t.Errorf("%s: had (%d events), but its answer was never handed over (streamed %q)", o.thread, len(ev), o.text)
		}
	}
	// Each call was made once at most, and each answered call once.
	tool.mu.Lock()
	defer tool.mu.Unlock()
	made := 0
	for call, n := range tool.calls {
		made++
		if n != 1 {
			t.Errorf("tool call %s made %d times", call, n)
		}
	}
	t.Logf("%d messages: %d streamed, %d recovered, %d never had, %d told and recovered too; %d tool calls made once each",
		len(outcomes), streamed, recoveredN, notHad, twice, made)
}

// onlyText is the text of the one answer recovered.
func onlyText(answers map[string]string) string {
	for _, text := range answers {
		return text
	}
	return ""
}

// finalText is the text of a conversation's last final answer.
func finalText(ev []store.Event) string {
	for i := len(ev) - 1; i >= 0; i-- {
		if store.FinalAnswer(ev[i]) {
			return ev[i].Text
		}
	}
	return ""
}

// finalTurnText is what the last turn streamed: its answers' text since
// its message, rounds apart as the harness streams them.
func finalTurnText(ev []store.Event) string {
	start := 0
	for i := len(ev) - 1; i >= 0; i-- {
		if ev[i].Kind == store.KindMessage {
			start = i
			break
		}
	}
	var parts []string
	for _, e := range ev[start:] {
		if e.Kind == store.KindAnswer && e.Text != "" {
			parts = append(parts, e.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}
