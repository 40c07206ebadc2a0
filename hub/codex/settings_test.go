package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/lnk-dev/link/hub"
)

var probe = []hub.Tool{{Name: "probe", URL: "http://127.0.0.1:9/p"}, {Name: "acme_memory", URL: "http://127.0.0.1:9/m"}}

// servers reads config.toml's mcp_servers' urls.
func servers(t *testing.T, path string) map[string]string {
	t.Helper()
	var c struct {
		Servers map[string]struct {
			URL string `toml:"url"`
		} `toml:"mcp_servers"`
	}
	if _, err := toml.DecodeFile(path, &c); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for name, s := range c.Servers {
		out[name] = s.URL
	}
	return out
}

// TestSettingsWritten: Link's tools are tables of mcp_servers in a block
// of their own at the end of $CODEX_HOME/config.toml, the owner's text
// before it kept byte for byte; written again the same, nothing
// changes; with another address, the block is replaced, not added to.
func TestSettingsWritten(t *testing.T) {
	own := t.TempDir()
	s := Settings{Env: map[string]string{"HOME": t.TempDir(), "CODEX_HOME": own}}
	path := filepath.Join(own, "config.toml")
	owners := "model = \"o3\" # the owner's\n\n[mcp_servers.mine]\ncommand = \"x\"\n"
	os.WriteFile(path, []byte(owners), 0o600)
	if changed, err := s.WriteTools(t.Context(), probe); !changed || err != nil {
		t.Fatalf("%v, %v", changed, err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), strings.TrimRight(owners, "\n")+"\n\n"+blockStart) || !strings.HasSuffix(string(b), blockEnd) {
		t.Fatalf("wrote\n%s", b)
	}
	want := map[string]string{"mine": "", "probe": "http://127.0.0.1:9/p", "acme_memory": "http://127.0.0.1:9/m"}
	if got := servers(t, path); len(got) != 3 || got["probe"] != want["probe"] || got["acme_memory"] != want["acme_memory"] {
		t.Fatalf("mcp_servers %v", got)
	}
	if changed, err := s.WriteTools(t.Context(), probe); changed || err != nil {
		t.Fatalf("again: %v, %v", changed, err)
	}
	moved := []hub.Tool{{Name: "probe", URL: "http://127.0.0.1:10/p"}}
	if changed, err := s.WriteTools(t.Context(), moved); !changed || err != nil {
		t.Fatalf("moved: %v, %v", changed, err)
	}
	if got := servers(t, path); len(got) != 2 || got["probe"] != "http://127.0.0.1:10/p" {
		t.Fatalf("after the move mcp_servers %v", got)
	}
	if b, _ := os.ReadFile(path); strings.Count(string(b), blockStart) != 1 {
		t.Fatalf("two blocks:\n%s", b)
	}
}

// TestSettingsRefused: the owner's ~/.codex is never written, nor a
// config.toml that doesn't read as TOML, names one of Link's tools
// itself, or holds mcp_servers as an inline table: each is left as it
// was, the refusal saying why.
func TestSettingsRefused(t *testing.T) {
	home := t.TempDir()
	os.Mkdir(filepath.Join(home, ".codex"), 0o700)
	for _, env := range []map[string]string{{"HOME": home}, {"HOME": home, "CODEX_HOME": filepath.Join(home, ".codex")}} {
		if _, err := (Settings{Env: env}).WriteTools(t.Context(), probe); err == nil || !strings.Contains(err.Error(), "owner's own") {
			t.Errorf("%v: %v", env, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".codex", "config.toml")); err == nil {
		t.Error("written in the owner's ~/.codex")
	}
	for text, why := range map[string]string{
		"model = ": "doesn't read as TOML",
		"[mcp_servers.probe]\ncommand = \"mine\"\n":    "names mcp_servers.probe itself",
		"mcp_servers = { mine = { command = \"x\" } }": "can't take Link's tools",
		blockStart + "[mcp_servers.x]\n":               "has no end",
	} {
		own := t.TempDir()
		path := filepath.Join(own, "config.toml")
		os.WriteFile(path, []byte(text), 0o600)
		_, err := (Settings{Env: map[string]string{"HOME": home, "CODEX_HOME": own}}).WriteTools(t.Context(), probe)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want %q", text, err, why)
		}
		if b, _ := os.ReadFile(path); string(b) != text {
			t.Errorf("%q: changed to %q", text, b)
		}
	}
}

// FuzzSettings: whatever config.toml holds, it is refused and left as it
// was, or written so that it reads as TOML with Link's tools, the
// owner's text before the block kept.
func FuzzSettings(f *testing.F) {
	for _, s := range []string{"", "a = 1\n", "[mcp_servers.x]\nurl = \"u\"\n", blockStart + blockEnd, "mcp_servers = 3", "[[mcp_servers]]\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		own := t.TempDir()
		path := filepath.Join(own, "config.toml")
		os.WriteFile(path, []byte(text), 0o600)
		_, err := (Settings{Env: map[string]string{"HOME": "/nonexistent", "CODEX_HOME": own}}).WriteTools(t.Context(), probe[:1])
		b, _ := os.ReadFile(path)
		if err != nil {
			if string(b) != text {
				t.Fatalf("refused (%v) and changed", err)
			}
			return
		}
		if got := servers(t, path); got["probe"] != "http://127.0.0.1:9/p" {
			t.Fatalf("wrote %q: mcp_servers %v", b, got)
		}
		owners, _ := withoutBlock(text)
		if !strings.HasPrefix(string(b), strings.TrimRight(owners, " \t\r\n")) {
			t.Fatalf("the owner's text %q not kept in %q", owners, b)
		}
	})
}
