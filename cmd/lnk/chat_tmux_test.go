package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
)

// tmuxPane is lnk running in a real terminal: a tmux session of its own,
// on a server of its own, typed at with send-keys and read with
// capture-pane.
type tmuxPane struct {
	t    *testing.T
	tmux string
	sock string
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the pane shows, its scrollback too, lines' ends trimmed.
func (p *tmuxPane) screen() string {
	p.t.Helper()
	lines := strings.Split(p.run("capture-pane", "-p", "-S", "-", "-t", "lnk"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// waitFor polls the screen until ok says it shows what is waited for, up
// to a deadline generous for a loaded machine, and returns that screen.
func (p *tmuxPane) waitFor(what string, ok func(screen string) bool) string {
	p.t.Helper()
	var s string
	if err := testwait.Err(60*time.Second, what+" on the terminal", func() bool { s = p.screen(); return ok(s) }); err != nil {
		p.t.Fatalf("%v; it shows:\n%s", err, s)
	}
	return s
}

// gate holds what passes it until it is opened.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate  { return &gate{ch: make(chan struct{})} }
func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

var (
	spinnerShown = regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] \d+\.\ds`)
	callRunning  = regexp.MustCompile(`⚙ web__fetch … \d+\.\ds`)
	callDone     = regexp.MustCompile(`⚙ web__fetch done \d+\.\ds`)
)

// lnk agent chat in a real terminal, as a person meets it: a spinner
// with the time until the model's first word (the fake provider holds it
// back), then the answer's Markdown rendered; Up brings the last message
// back; a pasted text of three lines is one message; a tool call's line
// goes from running to done in place; and the history is kept for the
// owner alone.
func TestChatTerminal(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux isn't installed: .ci/run installs it, and this test needs it in CI")
		}
		t.Skip("tmux isn't installed (apt-get install tmux)")
	}
	if runtime.GOOS == "windows" {
		t.Skip("tmux runs on unix")
	}
	began := time.Now()
	// lnk as installed: its sandbox's program beside it, which run takes
	// rather than building one from the checkout (with the test's empty
	// HOME, from an empty Go cache) while the chat starts.
	bin := filepath.Join(t.TempDir(), "lnk")
	for _, b := range []struct{ out, pkg string }{{bin, "."}, {filepath.Join(filepath.Dir(bin), "lnk-sandbox"), "../lnk-sandbox"}} {
		if out, err := exec.Command(goTool(), "build", "-o", b.out, b.pkg).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v: %s", b.pkg, err, out)
		}
	}

	t.Logf("lnk built in %v", time.Since(began).Round(time.Millisecond))
	// The model: a fake Anthropic, behind a door that holds the first
	// request until the spinner was seen.
	fake := fakeprovider.New()
	defer fake.Close()
	firstWord := newGate()
	defer firstWord.open()
	target, _ := url.Parse(fake.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	var held sync.Once
	door := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages") {
			held.Do(func() {
				select {
				case <-firstWord.ch:
				case <-r.Context().Done():
				}
			})
		}
		proxy.ServeHTTP(w, r)
	}))
	defer door.Close()
	// A tool on a real MCP server that answers once let.
	toolDone := newGate()
	defer toolDone.open()
	web := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	web.AddTool(&mcp.Tool{Name: "fetch", Description: "fetch a page", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-toolDone.ch:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the page"}}}, nil
		})
	mcpSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return web }, nil))
	defer mcpSrv.Close()

	// A tmux server of its own (a short socket path: unix sockets have
	// ~100 bytes).
	dir, err := os.MkdirTemp("", "lnktmux")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p := &tmuxPane{t: t, tmux: tmux, sock: filepath.Join(dir, "s")}
	home := t.TempDir()
	env := []string{
		"HOME=" + home, "LNK_HOME=" + home, "TERM=xterm-256color", "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
		"ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=" + door.URL, "LNK_TOOL_WEB=" + mcpSrv.URL,
	}
	cmd := "env -i " + strings.Join(quoteAll(env), " ") + " " + shellQuote(bin) + " agent chat; echo lnk exited $?; sleep 600"
	p.run("new-session", "-d", "-s", "lnk", "-x", "100", "-y", "50", cmd)
	defer exec.Command(tmux, "-S", p.sock, "kill-server").Run()
	p.waitFor("the prompt", func(s string) bool {
		return strings.Contains(s, "lnk: chatting in link:chat") && strings.HasSuffix(s, "›")
	})

	// Until the first word, the spinner and the time; then the answer,
	// its heading and list rendered, and the spinner gone.
	fake.Script(fakeprovider.Turn{Text: "# Plan\n\n- first step\n- second step\n\nThat is all."})
	p.run("send-keys", "-t", "lnk", "make a plan", "Enter")
	s := p.waitFor("the spinner", spinnerShown.MatchString)
	t.Logf("the spinner: %q", spinnerShown.FindString(s))
	firstWord.open()
	s = p.waitFor("the answer", func(s string) bool { return strings.Contains(s, "That is all.") && strings.HasSuffix(s, "›") })
	if spinnerShown.MatchString(s) {
		t.Fatalf("the spinner stayed:\n%s", s)
	}
	if strings.Contains(s, "# Plan") || !regexp.MustCompile(`(?m)^ +Plan$`).MatchString(s) {
		t.Fatalf("the heading wasn't rendered:\n%s", s)
	}
	if strings.Contains(s, "- first step") || !strings.Contains(s, "• first step") || !strings.Contains(s, "• second step") {
		t.Fatalf("the list wasn't rendered:\n%s", s)
	}

	// Up brings the last message back to the prompt.
	p.run("send-keys", "-t", "lnk", "Up")
	p.waitFor("the last message recalled", func(s string) bool { return strings.HasSuffix(s, "› make a plan") })
	p.run("send-keys", "-t", "lnk", "C-u")
	p.waitFor("the prompt cleared", func(s string) bool { return strings.HasSuffix(s, "›") })

	// A paste of three lines is one message, sent at Enter; its answer
	// calls a tool, whose line runs, then is done, in place.
	fake.Script(
		fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "web__fetch", Input: `{"url":"x"}`}}},
		fakeprovider.Turn{Text: "Fetched **the page**."},
	)
	p.run("set-buffer", "-b", "three", "alpha one\nbeta two\ngamma three")
	p.run("paste-buffer", "-p", "-b", "three", "-t", "lnk")
	p.waitFor("the paste at the prompt", func(s string) bool { return strings.HasSuffix(s, "gamma three") })
	p.run("send-keys", "-t", "lnk", "Enter")
	s = p.waitFor("the tool call running", callRunning.MatchString)
	t.Logf("the call running: %q", callRunning.FindString(s))
	toolDone.open()
	s = p.waitFor("the tool call done", func(s string) bool { return strings.Contains(s, "Fetched the page.") && strings.HasSuffix(s, "›") })
	if callRunning.MatchString(s) || len(callDone.FindAllString(s, -1)) != 1 {
		t.Fatalf("the call's line wasn't turned from running to done:\n%s", s)
	}
	var asked []string
	for _, r := range fake.Requests() {
		asked = append(asked, r.LastUserText)
	}
	// Each message comes to the model after a line of who said it when.
	if !endsWith(asked, "\nalpha one\nbeta two\ngamma three") || endsWith(asked, "\nalpha one") || endsWith(asked, "\nbeta two") {
		t.Fatalf("the paste wasn't sent as one message: the model was asked %q", asked)
	}

	// /quit ends it; the history holds each message, for its owner alone.
	p.run("send-keys", "-t", "lnk", "/quit", "Enter")
	p.waitFor("lnk's end", func(s string) bool { return strings.Contains(s, "lnk exited 0") })
	sp, _ := store.For(home, "main")
	st, err := os.Stat(sp.ChatHistory())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("history %v, %v", st, err)
	}
	b, _ := os.ReadFile(sp.ChatHistory())
	if !strings.Contains(string(b), `"block":"alpha one\nbeta two\ngamma three"`) || !strings.Contains(string(b), `"block":"make a plan"`) {
		t.Fatalf("history:\n%s", b)
	}
	t.Logf("the terminal at the end (%v after the start):\n%s", time.Since(began).Round(time.Millisecond), p.screen())
}

// endsWith says whether one of list ends with s.
func endsWith(list []string, s string) bool {
	for _, v := range list {
		if strings.HasSuffix(v, s) {
			return true
		}
	}
	return false
}

// goTool is the go command that runs this test.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shellQuote(s)
	}
	return out
}

// shellQuote is s as one word of sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
