package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
)

// TestAgentConfigure: lnk agent configure writes the agent's spec as its
// config.json, which lnk agent chat then runs on (its model an alias of
// the spec's for the offline model); a misspelled key is refused by its
// line, the config.json written before left as it was.
func TestAgentConfigure(t *testing.T) {
	home := t.TempDir()
	p, _ := store.For(home, "main")
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(p.Root, "spec.toml")
	if err := os.WriteFile(spec, []byte("[model]\nname = \"mine\"\n\n[model.aliases]\nmine = \"offline\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := chatRun("agent", "configure", "--home", home)
	if code != 0 || !strings.Contains(out, "wrote "+p.Config()) {
		t.Fatalf("lnk agent configure: %d %q %s", code, out, errOut)
	}
	config, err := os.ReadFile(p.Config())
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut = chatIn(t, map[string]string{"LNK_HOME": home}, "/model:set\nhello there\n/quit\n")
	if code != 0 || !strings.Contains(errOut, "runs on mine, as its config.json says") || !strings.HasPrefix(out, "This conversation runs on offline.\n"+scripted.Label) ||
		!strings.Contains(out, "hello there") || strings.Contains(out+errOut, "no provider") {
		t.Fatalf("chat on the spec's model: %d %q %s", code, out, errOut)
	}
	if err := os.WriteFile(spec, []byte("[model]\nname = \"mine\"\nfalbacks = [\"offline\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = chatRun("agent", "configure", "--home", home)
	if code != 1 || !strings.Contains(errOut, spec+": line 3: model.falbacks: no such key") {
		t.Fatalf("a misspelled key: %d %s", code, errOut)
	}
	if now, _ := os.ReadFile(p.Config()); string(now) != string(config) {
		t.Fatalf("config.json was %s, is %s", config, now)
	}
}
