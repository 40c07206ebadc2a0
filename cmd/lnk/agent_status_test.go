package main

import (
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lnk-dev/link/cmd/internal/agentlog"
	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store/log"
)

// lnk agent status against an agent started here: its endpoint answers
// at its URL, held by this process; the model is $LNK_MODEL's, no key
// set for it, so it says which variable to set; its conversation is
// counted; memory answers initialize and a tool at a closed port
// doesn't; the key file is named and never read out; and the last
// failure is the one the harness logged.
func TestAgentStatus(t *testing.T) {
	home, p, _ := chatHome(t)
	key, err := ensureKey(p.KeyFile())
	if err != nil {
		t.Fatal(err)
	}
	logger, closeLog := agentlog.Logger(p, os.Stderr, slog.LevelError)
	defer closeLog()
	q := scripted.New(model.Response{Text: "hi"})
	s, err := serve.Start(t.Context(), serve.Config{
		Home: home, Key: key, Model: "scripted/test", Logger: logger,
		Edit: func(c *harness.Config) {
			c.Route = func(name string) (model.Route, error) {
				return model.Route{Provider: scripted.ScriptedName, APIModel: name}, nil
			}
			c.Provider = func(model.Route) (model.Provider, error) { return q, nil }
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mem, err := startMemory(t.Context(), chatFlags{home: home, agent: "main"}, p, map[string]string{}, "127.0.0.1:0", false, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	logger.Warn("turn failed", "thread", "link:chat", "err", "the provider said 529")

	port := strings.TrimSuffix(strings.TrimPrefix(s.URL(), "http://127.0.0.1:"), "/acp")
	env := map[string]string{
		"LNK_HOME": home, "LNK_PORT": port, "LNK_MODEL": "anthropic/claude-opus-5-5",
		"LNK_MEMORY": mem.URL(), "LNK_TOOL_GONE": "http://127.0.0.1:1/mcp",
	}
	var out, errb safeBuffer
	if code := NewMain(&out, &errb, env).Run(t.Context(), []string{"agent", "status", "--json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var st agentStatus
	if err := json.Unmarshal([]byte(out.String()), &st); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	e := st.Endpoint
	if !e.Answers || e.URL != s.URL() || e.From != "$LNK_PORT" {
		t.Errorf("endpoint %+v", e)
	}
	if runtime.GOOS == "linux" && (e.PID != os.Getpid() || !strings.Contains(e.Command, "lnk.test")) {
		t.Errorf("endpoint held by %d %q, want this process %d", e.PID, e.Command, os.Getpid())
	}
	if m := st.Model; m.Model != "anthropic/claude-opus-5-5" || m.From != modelFromEnv || !strings.Contains(m.NoKey, "set ANTHROPIC_API_KEY") {
		t.Errorf("model %+v", m)
	}
	if st.Storage.New != log.Name || st.Storage.ByKind[log.Name] != 1 {
		t.Errorf("storage %+v", st.Storage)
	}
	type tool struct {
		Name           string
		Answers, Error bool
	}
	var tools []tool
	for _, tl := range st.Tools {
		tools = append(tools, tool{tl.Name, tl.Answers, tl.Error != ""})
	}
	if diff := cmp.Diff([]tool{{"gone", false, true}, {"memory", true, false}}, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if k := st.KeyFile; k.Path != p.KeyFile() || !k.Exists || k.Mode != "0600" || k.Problem != "" {
		t.Errorf("key file %+v", k)
	}
	if f := st.LastFailure; f == nil || f.Message != "turn failed" || !strings.Contains(f.Line, "529") {
		t.Errorf("last failure %+v", f)
	}
	if st.Home != home || st.Agent != "main" || len(st.Problems) != 0 {
		t.Errorf("%+v", st)
	}
	if strings.Contains(out.String(), string(key)) {
		t.Fatal("the key is in the status")
	}
	secret := strings.TrimPrefix(mem.URL(), "http://"+mem.Host())
	if len(secret) < 40 || strings.Contains(out.String(), secret) {
		t.Fatalf("memory's secret %q is in the status", secret)
	}

	// The same for a person.
	var text safeBuffer
	if code := NewMain(&text, &errb, env).Run(t.Context(), []string{"agent", "status"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.Contains(text.String(), secret) {
		t.Fatal("memory's secret is in the status")
	}
	for _, want := range []string{"answers at " + s.URL(), "$LNK_MODEL says so", "set ANTHROPIC_API_KEY", "memory at 127.0.0.1:", "gone at 127.0.0.1:1: doesn't answer", "1 log", p.KeyFile() + " (0600)", "turn failed"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, text.String())
		}
	}
	if runtime.GOOS == "linux" && !strings.Contains(text.String(), "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("status lacks the process:\n%s", text.String())
	}
	if strings.Contains(text.String(), string(key)) {
		t.Fatal("the key is in the status")
	}
}

// With nothing running, status says the endpoint doesn't answer and
// the key file is missing, with how to make one.
func TestAgentStatusNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // a port nothing listens on
	home := t.TempDir()
	var out, errb safeBuffer
	env := map[string]string{"LNK_HOME": home, "LNK_PORT": strconv.Itoa(port)}
	if code := NewMain(&out, &errb, env).Run(t.Context(), []string{"agent", "status"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"doesn't answer at http://127.0.0.1:" + strconv.Itoa(port), "offline (no model provider key is set", "none named", "lnk agent key --key-file", "none in "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
}
