package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/conformance"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/hub"
	"github.com/lnk-dev/link/internal/stdioagent"
)

// The test binary is also the scripted stdio agent, and, with
// LNK_ACP_TEST_MAIN=1, lnk-acp itself (for the test that kills it).
func TestMain(m *testing.M) {
	hub.KeeperMain()
	stdioagent.Main()
	if os.Getenv("LNK_ACP_TEST_MAIN") == "1" {
		os.Args = append(os.Args[:1], strings.Fields(os.Getenv("LNK_ACP_TEST_ARGS"))...)
		main()
	}
	code := m.Run()
	if linkHarness.dir != "" {
		os.RemoveAll(linkHarness.dir)
	}
	os.Exit(code)
}

// syncBuffer is a buffer written by the program and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs lnk-acp in the test's process on port 0 with args, the
// scripted agent behind it.
func start(t *testing.T, env map[string]string, args ...string) (*Main, []byte) {
	t.Helper()
	full := map[string]string{stdioagent.Role: "agent", stdioagent.EnvState: t.TempDir()}
	for k, v := range env {
		full[k] = v
	}
	return runACP(t, full, args, os.Args[0])
}

// startCommand runs lnk-acp in the test's process on port 0, command
// behind it with env alone.
func startCommand(t testing.TB, env map[string]string, command ...string) (*Main, []byte) {
	t.Helper()
	return runACP(t, env, nil, command...)
}

// runACP runs lnk-acp with flags and command.
func runACP(t testing.TB, env map[string]string, flags []string, command ...string) (*Main, []byte) {
	t.Helper()
	return runEdited(t, env, flags, nil, command...)
}

// runEdited runs lnk-acp with flags and command, the program changed by
// edit (when not nil) once its flags are read.
func runEdited(t testing.TB, env map[string]string, flags []string, edit func(*Main), command ...string) (*Main, []byte) {
	t.Helper()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	key := []byte("lnk-acp-test-key")
	os.WriteFile(keyFile, append(key, '\n'), 0o600)
	var stderr syncBuffer
	m := NewMain(&syncBuffer{}, &stderr, env)
	args := append([]string{"--home", dir, "--key-file", keyFile, "--port", "0"}, flags...)
	if err := m.ParseFlags(append(append(args, "--"), command...)); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(context.Background()) }()
	select {
	case <-m.Ready():
	case err := <-done:
		t.Fatalf("lnk-acp ended: %v; %s", err, stderr.String())
	}
	t.Cleanup(func() {
		m.Close()
		if t.Failed() {
			t.Logf("lnk-acp's log:\n%s", stderr.String())
		}
	})
	return m, key
}

// TestConformance: lnk-acp serving the scripted agent passes the kit, as
// far as that agent can (it has no tools and no recording model): a turn
// whose caller went ("slow" answers after a second) is kept by the hub
// for _link/recover.
func TestConformance(t *testing.T) {
	m, key := start(t, nil)
	conformance.Run(t, conformance.Target{URL: m.URL(), Key: key, Agent: "main", Nameless: true, PID: os.Getpid(), Recover: &conformance.Recover{Prompt: "slow"}})
}

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in the error; "" for none
	}{
		{[]string{"--key-file", "k"}, "no harness"},
		{[]string{"--key-file", "k", "--preset", "vim"}, "--preset is claude, codex or gemini"},
		{[]string{"--preset", "claude"}, "no key file"},
		{[]string{"--key-file", "k", "--preset", "codex"}, ""},
		{[]string{"--key-file", "k", "--", "my-agent", "--acp"}, ""},
		{[]string{"--key-file", "k", "stray", "--", "x"}, "follows --"},
	} {
		m := NewMain(&bytes.Buffer{}, &bytes.Buffer{}, map[string]string{"LNK_HOME": t.TempDir()})
		err := m.ParseFlags(c.args)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
	m := NewMain(&bytes.Buffer{}, &bytes.Buffer{}, map[string]string{"LNK_HOME": "/h"})
	m.ParseFlags([]string{"--key-file", "k", "--preset", "gemini"})
	if strings.Join(m.Command, " ") != "gemini --acp" {
		t.Errorf("the gemini preset runs %q", m.Command)
	}
}

// message sends one message as a bridge does and returns its chunks.
func message(t testing.TB, ctx context.Context, url string, key []byte, thread, text string) string {
	t.Helper()
	return messageMeta(t, ctx, url, key, thread, text, nil)
}

// messageMeta is message with meta (nil for none) as the prompt's _meta.
func messageMeta(t testing.TB, ctx context.Context, url string, key []byte, thread, text string, meta json.RawMessage) string {
	t.Helper()
	f, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var b strings.Builder
	c := acp.NewClient(ctx, f, func(method string, params json.RawMessage) {
		var p struct {
			Update struct {
				Kind    string `json:"sessionUpdate"`
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		}
		json.Unmarshal(params, &p)
		if p.Update.Kind == acp.UpdateMessageChunk {
			mu.Lock()
			b.WriteString(p.Update.Content.Text)
			mu.Unlock()
		}
	})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, thread); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, meta); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return b.String()
}
