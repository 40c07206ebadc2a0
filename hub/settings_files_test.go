package hub

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/internal/fsx"
)

// TestOwnSettings: a harness's folder is its own when its variable
// names one other than its owner's ($HOME's); unset or the owner's,
// refused saying which variable to set, naming no path of the machine.
func TestOwnSettings(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		value, want, err string
	}{
		{"", "", "$CODEX_HOME is not set, so its folder is its owner's own ($HOME/.codex)"},
		{filepath.Join(home, ".codex"), "", "names its owner's own folder ($HOME/.codex)"},
		{filepath.Join(home, ".codex") + "/", "", "names its owner's own folder"},
		{filepath.Join(home, "agent"), filepath.Join(home, "agent", "config.toml"), ""},
	} {
		env := map[string]string{"HOME": home, "CODEX_HOME": c.value}
		f, err := OwnSettings(env, "CODEX_HOME", ".codex", "config.toml")
		if f.Path != c.want || (err == nil) != (c.err == "") || (err != nil && (!strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), home))) {
			t.Errorf("CODEX_HOME=%q: %q, %v; want %q, %q", c.value, f.Path, err, c.want, c.err)
		}
		if err == nil && f.Name != "$CODEX_HOME/config.toml" {
			t.Errorf("named %q", f.Name)
		}
	}
}

// TestWriteJSONServers: Link's tools are set among a JSON settings
// file's mcpServers, its other settings and servers kept; written again
// as they are, the file is left as it was (even as the harness reordered
// it); a file that isn't a JSON object, or is a link, is refused and
// left as it was.
func TestWriteJSONServers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "settings.json")
	file := func(p string) SettingsFile { return SettingsFile{Path: p, Name: "$X/settings.json"} }
	servers := map[string]any{"memory": map[string]string{"httpUrl": "http://127.0.0.1:9/m"}}
	if changed, err := WriteJSONServers(file(path), servers); !changed || err != nil {
		t.Fatalf("a new file: %v, %v", changed, err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("made %v, %v", info.Mode(), err)
	}
	owners := `{"theme":"dark","mcpServers":{"mine":{"command":"x"},"memory":{"httpUrl":"old"}},"n":1}`
	os.WriteFile(path, []byte(owners), 0o600)
	if changed, err := WriteJSONServers(file(path), servers); !changed || err != nil {
		t.Fatalf("the owner's file: %v, %v", changed, err)
	}
	b, _ := os.ReadFile(path)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	mcp := got["mcpServers"].(map[string]any)
	if got["theme"] != "dark" || got["n"] != 1.0 || mcp["mine"] == nil || mcp["memory"].(map[string]any)["httpUrl"] != "http://127.0.0.1:9/m" {
		t.Fatalf("wrote %s", b)
	}
	reordered := `{"n":1,"mcpServers":{"memory":{"httpUrl":"http://127.0.0.1:9/m"},"mine":{"command":"x"}},"theme":"dark"}`
	os.WriteFile(path, []byte(reordered), 0o600)
	if changed, err := WriteJSONServers(file(path), servers); changed || err != nil {
		t.Fatalf("as they were: %v, %v", changed, err)
	}
	if b, _ := os.ReadFile(path); string(b) != reordered {
		t.Fatalf("rewritten as %s", b)
	}
	for name, text := range map[string]string{
		"comments":       "// mine\n{}",
		"an array":       "[]",
		"servers a list": `{"mcpServers":[]}`,
	} {
		os.WriteFile(path, []byte(text), 0o600)
		if _, err := WriteJSONServers(file(path), servers); err == nil {
			t.Errorf("%s: written", name)
		}
		if b, _ := os.ReadFile(path); string(b) != text {
			t.Errorf("%s: changed to %s", name, b)
		}
	}
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte("{}"), 0o600)
	link := filepath.Join(dir, "link.json")
	os.Symlink(other, link)
	if _, err := WriteJSONServers(file(link), servers); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("a link: %v", err)
	}
	linkDir := filepath.Join(dir, "linked")
	os.Symlink(filepath.Dir(other), linkDir)
	if _, err := WriteJSONServers(file(filepath.Join(linkDir, "settings.json")), servers); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("a folder that is a link: %v", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "{}" {
		t.Errorf("written through a link: %s", b)
	}
	os.WriteFile(path, []byte(`{"x":"`+strings.Repeat("a", MaxSettings)+`"}`), 0o600)
	if _, err := WriteJSONServers(file(path), servers); !errors.Is(err, fsx.ErrTooBig) || strings.Contains(err.Error(), dir) {
		t.Errorf("past its bound: %v", err)
	}
}

// FuzzWriteJSONServers: whatever a settings file holds, it is refused or
// written with Link's tool among its mcpServers and every other setting
// it had.
func FuzzWriteJSONServers(f *testing.F) {
	for _, s := range []string{"", "{}", `{"mcpServers":null}`, `{"mcpServers":{"a":1},"b":[1,2]}`, "[]", `{"a":"\u003c&"}`, "nul"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		path := filepath.Join(t.TempDir(), "settings.json")
		os.WriteFile(path, in, 0o600)
		servers := map[string]any{"memory": map[string]string{"url": "http://127.0.0.1:9/m"}}
		if _, err := WriteJSONServers(SettingsFile{Path: path, Name: "s"}, servers); err != nil {
			if b, _ := os.ReadFile(path); string(b) != string(in) {
				t.Fatalf("refused (%v) and changed", err)
			}
			return
		}
		b, _ := os.ReadFile(path)
		var after, before map[string]json.RawMessage
		if err := json.Unmarshal(b, &after); err != nil {
			t.Fatalf("wrote no JSON object: %s", b)
		}
		var mcp map[string]map[string]string
		json.Unmarshal(after["mcpServers"], &mcp)
		if mcp["memory"]["url"] != "http://127.0.0.1:9/m" {
			t.Fatalf("wrote %s", b)
		}
		json.Unmarshal(in, &before)
		for k, v := range before {
			if k != "mcpServers" && !jsonEqual(v, after[k]) {
				t.Fatalf("%s was %s, now %s", k, v, after[k])
			}
		}
	})
}
