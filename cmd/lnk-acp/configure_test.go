package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/stdioagent"
)

// TestConfigureKeepsTools: lnk-acp configure writes the agent's spec as
// its config.json and keeps the tools its environment names; lnk-acp
// serve, started with none in its environment, hands the kept ones to
// each session (mcpServers), a variable its own environment sets winning
// over the kept one. A spec refused (a misspelled key, by its line)
// writes nothing: config.json and the kept tools stay as they were.
func TestConfigureKeepsTools(t *testing.T) {
	home := t.TempDir()
	folder := filepath.Join(home, "agents", "main")
	if err := os.MkdirAll(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(folder, "spec.toml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(spec, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[run]\ntimeout = 90\n\n[tool.task]\nmost = 3\n")
	env := map[string]string{"LNK_MEMORY": "http://127.0.0.1:1/memory", "LNK_TOOL_TASK": "http://127.0.0.1:2/task", "LNK_MODEL": "not a tool"}
	var out, errs bytes.Buffer
	if code := configure(env).Run([]string{"--home", home}, env, &out, &errs); code != 0 {
		t.Fatalf("configure: %d %s", code, errs.String())
	}
	if !strings.Contains(out.String(), "kept Link's tools for serve in "+keptToolsFile(folder)+": memory, task") {
		t.Fatalf("configure said %q", out.String())
	}
	config, err := os.ReadFile(filepath.Join(folder, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Run  struct{ Timeout int }     `json:"run"`
		Tool map[string]map[string]int `json:"tool"`
	}
	if err := json.Unmarshal(config, &c); err != nil || c.Run.Timeout != 90 || c.Tool["task"]["most"] != 3 {
		t.Fatalf("config.json %s (%v)", config, err)
	}
	kept, err := os.ReadFile(keptToolsFile(folder))
	if err != nil {
		t.Fatal(err)
	}
	var keptVars map[string]string
	if err := json.Unmarshal(kept, &keptVars); err != nil || len(keptVars) != 2 || keptVars["LNK_MEMORY"] == "" || keptVars["LNK_TOOL_TASK"] == "" {
		t.Fatalf("kept %s (%v): want LNK_MEMORY and LNK_TOOL_TASK alone", kept, err)
	}
	if fi, _ := os.Stat(keptToolsFile(folder)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("the kept tools are %v, readable by others", fi.Mode())
	}

	m, key := start(t, map[string]string{stdioagent.EnvCaps: "mcp", "LNK_TOOL_TASK": "http://127.0.0.1:3/task"}, "--home", home)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := "mcp: memory=http://127.0.0.1:1/memory task=http://127.0.0.1:3/task"
	if a := message(t, ctx, m.URL(), key, "telegram:1", "mcp"); a != want {
		t.Errorf("the session was given %q, want %q", a, want)
	}

	write("[run]\ntimeout = 90\ntimout = 30\n")
	out.Reset()
	errs.Reset()
	if code := configure(map[string]string{}).Run([]string{"--home", home}, env, &out, &errs); code != 1 || !strings.Contains(errs.String(), spec+": line 3: run.timout: no such key") {
		t.Fatalf("a misspelled key: %d %q", code, errs.String())
	}
	for path, was := range map[string][]byte{filepath.Join(folder, "config.json"): config, keptToolsFile(folder): kept} {
		if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, was) {
			t.Fatalf("%s was %s, is %s (%v)", path, was, now, err)
		}
	}
}

// FuzzKeptTools: any bytes in the kept tools' file give the environment
// with only variables that name tools added, each without a NUL, or a
// refusal naming the file; never a panic, and never a variable the
// environment set changed.
func FuzzKeptTools(f *testing.F) {
	f.Add([]byte(`{"LNK_MEMORY": "http://127.0.0.1:1/m", "LNK_TOOL_TASK": "http://x/t"}`))
	f.Add([]byte(`{"LNK_MODEL": "x", "PATH": "/bin", "LNK_TOOL_": "y", "LNK_TOOL_A__B": "z"}`))
	f.Add([]byte(`{"LNK_RUN": "a\u0000b"}`))
	f.Add([]byte(`[1, 2]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		folder := t.TempDir()
		path := keptToolsFile(folder)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"LNK_MEMORY": "http://127.0.0.1:9/own", "PATH": "/usr/bin"}
		out, err := withKeptTools(env, folder)
		if err != nil {
			if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), "Link's tools kept") {
				t.Fatalf("the refusal %q names no file", err)
			}
			return
		}
		for k, v := range out {
			if was, ok := env[k]; ok {
				if v != was {
					t.Fatalf("%s was %q, is %q", k, was, v)
				}
				continue
			}
			if !strings.HasPrefix(k, "LNK_") || strings.ContainsRune(v, 0) {
				t.Fatalf("added %s=%q", k, v)
			}
		}
	})
}
