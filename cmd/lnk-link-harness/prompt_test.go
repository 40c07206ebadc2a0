package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
)

// The system prompt, as the provider receives it, is byte for byte the
// same from turn to turn, through the real program and its provider's
// wire format, and changes only after a note is saved or a setting
// changes: a note from the notes section on, every section before it the
// same bytes.
func TestSystemPromptStable(t *testing.T) {
	for _, tc := range []struct {
		model string
		env   func(url string) map[string]string
	}{
		{"anthropic/claude-test", func(url string) map[string]string {
			return map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": url}
		}},
		{"openai/gpt-test", func(url string) map[string]string {
			return map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": url + "/v1"}
		}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			fake := fakeprovider.New()
			defer fake.Close()
			home := t.TempDir()
			p, err := store.For(home, "main")
			if err != nil {
				t.Fatal(err)
			}
			write := func(name, text string) {
				t.Helper()
				path := filepath.Join(p.Root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("instructions/models/"+tc.model+"/instruction.md", "Model words.")
			write("instructions/persona.md", "You are Ada.")
			write("instructions/owner.md", "Your owner is Grace.")
			write("instructions/instruction.md", "Use kilometres.")
			write("memory/notes.md", "2026-11-02: the boat is the Mola.\n")
			write("skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Reads PDFs.\n---\n")
			write("files/AGENTS.md", "Run make test.")
			write("config.json", `{"connections": {"telegram": {}}}`)

			m, _, _ := startEnv(t, home, tc.env(fake.URL()), "--model", tc.model)
			turn := func(text string) fakeprovider.Request {
				t.Helper()
				fake.Script(fakeprovider.Turn{Text: "ok"})
				n := len(fake.Requests())
				say(t, m.URL(), "telegram:1", text)
				reqs := fake.Requests()
				if len(reqs) != n+1 {
					t.Fatalf("%d requests for one message, want 1", len(reqs)-n)
				}
				return reqs[n]
			}
			first := turn("hi")
			for _, want := range []string{"Link Harness", "Model words.", "/files", "telegram", "Run make test.", "- pdf: Reads PDFs.", "You are Ada.", "Your owner is Grace.", "Use kilometres.", "# Your notes\n\n2026-11-02: the boat is the Mola.", "# Now"} {
				if !strings.Contains(first.System, want) {
					t.Errorf("the system prompt sent has no %q:\n%s", want, first.System)
				}
			}
			for i := range 3 {
				if r := turn("again"); !bytes.Equal(system(t, r), system(t, first)) {
					t.Fatalf("turn %d's system prompt differs from the first's:\n%s\n%s", i+2, system(t, r), system(t, first))
				}
			}

			// A note saved: the prompt changes from the notes section on.
			write("memory/notes.md", "2026-11-02: the boat is the Mola.\n2026-12-01: Grace likes trains.\n")
			noted := turn("a note later")
			if !strings.Contains(noted.System, "Grace likes trains.") {
				t.Fatalf("the new note isn't in the next turn's prompt:\n%s", noted.System)
			}
			notesAt := strings.Index(first.System, "# Your notes")
			if !strings.HasPrefix(noted.System, first.System[:notesAt]) {
				t.Errorf("a note changed the prompt before the notes section")
			}
			if r := turn("and again"); !bytes.Equal(system(t, r), system(t, noted)) {
				t.Fatalf("the prompt moved again with nothing changed")
			}

			// A setting changed: read at the next turn.
			write("config.json", `{"connections": {"telegram": {}}, "instructions": {"persona": "none"}}`)
			set := turn("a setting later")
			if strings.Contains(set.System, "You are Ada.") || !strings.Contains(set.System, "Your owner is Grace.") {
				t.Fatalf("the persona left out by a setting is still sent, or more went:\n%s", set.System)
			}
			if r := turn("once more"); !bytes.Equal(system(t, r), system(t, set)) {
				t.Fatalf("the prompt moved again with nothing changed")
			}
		})
	}
}

// system is the system prompt of a request as its wire format carries
// it: Anthropic's system blocks, or Chat Completions' system message.
func system(t *testing.T, r fakeprovider.Request) []byte {
	t.Helper()
	var v any
	switch r.API {
	case "anthropic":
		v = r.Decoded["system"]
	default:
		msgs, _ := r.Decoded["messages"].([]any)
		if len(msgs) > 0 {
			v = msgs[0]
		}
	}
	if v == nil {
		t.Fatalf("a %s request with no system prompt", r.API)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// What a tool says of itself (its MCP initialize instructions) is in the
// prompt's tools section, under its name, and stays there, the same
// bytes, after a restart with the tool down: kept beside its listing.
func TestToolsSectionKept(t *testing.T) {
	web := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, &mcp.ServerOptions{Instructions: "Fetch a page before you quote it."})
	web.AddTool(&mcp.Tool{Name: "fetch", Description: "fetch a page", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the page"}}}, nil
		})
	mcpSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return web }, nil))
	defer mcpSrv.Close()
	fake := fakeprovider.New()
	defer fake.Close()
	home := t.TempDir()
	env := map[string]string{"LNK_TOOL_WEB": mcpSrv.URL, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	ask := func(m *Main) fakeprovider.Request {
		t.Helper()
		fake.Script(fakeprovider.Turn{Text: "ok"})
		n := len(fake.Requests())
		say(t, m.URL(), "telegram:1", "hi")
		return fake.Requests()[n]
	}
	m, _, stop := startEnv(t, home, env, "--model", "anthropic/claude-test")
	first := ask(m)
	if !strings.Contains(first.System, "# Your tools\n\n## web\n\nFetch a page before you quote it.") {
		t.Fatalf("no tools section of web's words:\n%s", first.System)
	}
	stop()
	mcpSrv.Close() // web is down from here
	m, _, _ = startEnv(t, home, env, "--model", "anthropic/claude-test")
	again := ask(m)
	if !bytes.Equal(system(t, again), system(t, first)) {
		t.Fatalf("with web down after a restart the prompt differs:\n%s\nwant\n%s", again.System, first.System)
	}
}
