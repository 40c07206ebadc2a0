package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

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

const testKey = "cmd-test-key-0123456789"

// start runs the real program on port 0 over home until the test ends or
// stop is called.
func start(t *testing.T, home string, extra ...string) (m *Main, out *syncBuffer, stop func()) {
	t.Helper()
	return startEnv(t, home, map[string]string{}, extra...)
}

// startEnv is start with the environment env.
func startEnv(t *testing.T, home string, env map[string]string, extra ...string) (m *Main, out *syncBuffer, stop func()) {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out = &syncBuffer{}
	m = NewMain(out, &syncBuffer{}, env)
	args := append([]string{"serve", "--home", home, "--agent", "main", "--port", "0", "--key-file", keyFile, "--model", "offline"}, extra...)
	if err := m.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- m.Run(context.Background()) }()
	select {
	case <-m.Ready():
	case err := <-errc:
		t.Fatalf("run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not listening")
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			m.Close()
			if err := <-errc; err != nil {
				t.Errorf("run ended with %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return m, out, stop
}

// say sends one message as a bridge does and returns the streamed answer.
func say(t *testing.T, url, thread, text string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: []byte(testKey), Agent: "main"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got strings.Builder
	c := acp.NewClient(ctx, conn, func(method string, params json.RawMessage) {
		var n acp.Notification
		var u acp.Update
		if method != acp.MethodSessionUpdate || json.Unmarshal(params, &n) != nil || json.Unmarshal(n.Update, &u) != nil || u.Content == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		got.WriteString(u.Content.Text)
	})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, thread); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return got.String()
}

func readEvents(t *testing.T, home, thread string) []store.Event {
	t.Helper()
	p, _ := store.For(home, "main")
	ev, err := log.Open(p.Chats()).Read(t.Context(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// The real program prints its endpoint once it listens, answers with the
// offline model, and, stopped and started again on the same store, goes
// on with the conversation: it kept nothing that matters in memory.
func TestServe(t *testing.T) {
	home := t.TempDir()
	m, out, stop := start(t, home)
	if got := out.String(); got != "endpoint "+m.URL()+"\n" || !strings.HasPrefix(m.URL(), "http://127.0.0.1:") || !strings.HasSuffix(m.URL(), contract.ACPPath) {
		t.Fatalf("printed %q", got)
	}
	if got := say(t, m.URL(), "telegram:42", "hello"); !strings.Contains(got, "[offline model]") || !strings.Contains(got, "hello") {
		t.Fatalf("answered %q", got)
	}
	stop()
	m2, _, _ := start(t, home)
	if got := say(t, m2.URL(), "telegram:42", "again"); !strings.Contains(got, "again") {
		t.Fatalf("answered %q", got)
	}
	ev := readEvents(t, home, "telegram:42")
	if len(ev) != 4 || ev[0].Text != "hello" || ev[2].Text != "again" || !store.FinalAnswer(ev[3]) || ev[3].Model != "offline" || ev[3].Usage == nil {
		t.Fatalf("events %+v", ev)
	}
}

// A turn a crash left unfinished is finished when the program starts, its
// answer kept for _link/recover and handed over once.
func TestFinishesCrashedTurn(t *testing.T) {
	home := t.TempDir()
	p, _ := store.For(home, "main")
	if err := log.Open(p.Chats()).Append(t.Context(), "telegram:7", store.Event{Seq: 1, Time: time.Now().UTC(), Kind: store.KindMessage, Header: "[x]", Text: "left by a crash"}); err != nil {
		t.Fatal(err)
	}
	m, _, _ := start(t, home)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var res contract.RecoverResult
	testwait.For(t, 10*time.Second, "an answer handed over", func() bool {
		conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: m.URL(), Key: []byte(testKey)})
		if err != nil {
			t.Fatal(err)
		}
		c := acp.NewClient(ctx, conn, nil)
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		res, err = c.Recover(ctx, contract.RecoverParams{})
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Answers) > 0
	})
	if a := res.Answers[0]; len(res.Answers) != 1 || a.Thread != "telegram:7" || !strings.Contains(a.Text, "left by a crash") {
		t.Fatalf("handed over %+v", res.Answers)
	}
}

func TestParseFlags(t *testing.T) {
	env := map[string]string{"LNK_HOME": "/h", "LNK_AGENT": "work", "LNK_PORT": "9000", "LNK_KEY_FILE": "/k", "LNK_MODEL": "offline"}
	m := NewMain(&bytes.Buffer{}, &bytes.Buffer{}, env)
	if err := m.ParseFlags([]string{"serve"}); err != nil {
		t.Fatal(err)
	}
	type flags struct {
		Home, Agent, KeyFile, Model string
		Port                        int
	}
	want := flags{Home: "/h", Agent: "work", KeyFile: "/k", Model: "offline", Port: 9000}
	if diff := cmp.Diff(want, flags{m.Home, m.Agent, m.KeyFile, m.Model, m.Port}); diff != "" {
		t.Fatalf("from the environment (-want +got):\n%s", diff)
	}
	m = NewMain(&bytes.Buffer{}, &bytes.Buffer{}, env)
	if err := m.ParseFlags([]string{"serve", "--agent", "other", "--port", "0"}); err != nil || m.Agent != "other" || m.Port != 0 {
		t.Fatalf("flags over the environment: %+v, %v", m, err)
	}
	var help bytes.Buffer
	m = NewMain(&bytes.Buffer{}, &help, nil)
	if err := m.ParseFlags([]string{"serve", "--help"}); !errors.Is(err, flag.ErrHelp) || !strings.Contains(help.String(), "-key-file") {
		t.Fatalf("--help: %v, %q", err, help.String())
	}
	for _, bad := range [][]string{{}, {"run"}, {"serve", "x"}, {"serve", "--key-file", "/k", "--agent", "Bad"}, {"serve", "--key-file", "/k", "--port", "70000"}, {"serve"}, {"serve", "--key-file", "/k", "--model", "a b"}} {
		m := NewMain(&bytes.Buffer{}, &bytes.Buffer{}, map[string]string{"LNK_HOME": "/h"})
		if err := m.ParseFlags(bad); err == nil {
			t.Errorf("ParseFlags(%q) accepted", bad)
		}
	}
}
