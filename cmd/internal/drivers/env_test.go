//go:build unix

package drivers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store"
)

// A plugin started as a child is passed the base variables, its driver's
// settings and the outside variables its driver reads, and nothing else
// of the program's environment: not a provider's key, not another
// driver's settings. The plugin here is a script that writes what it was
// given and ends.
func TestChildEnv(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "env")
	prog := filepath.Join(dir, "plugin")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nenv > '"+got+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		EnvStoreCommand:                  prog,
		"PATH":                           "/usr/bin:/bin",
		"HOME":                           dir,
		"LNK_GCS_BUCKET":                 "chats",
		"GOOGLE_APPLICATION_CREDENTIALS": "/etc/link/gcs.json",
		"ANTHROPIC_API_KEY":              "sk-not-for-a-driver",
		"LNK_MEMORY":                     "http://127.0.0.1:1/mcp/secret",
	}
	p, err := store.For(dir, "main")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		driver    string
		want, not []string
	}{
		{"gcs", []string{"PATH", "HOME", "LNK_GCS_BUCKET", "GOOGLE_APPLICATION_CREDENTIALS"}, []string{"ANTHROPIC_API_KEY", "LNK_MEMORY", EnvStoreCommand}},
		{"sqlite", []string{"PATH", "HOME"}, []string{"LNK_GCS_BUCKET", "GOOGLE_APPLICATION_CREDENTIALS", "ANTHROPIC_API_KEY", "LNK_MEMORY"}},
	} {
		os.Remove(got)
		ch := Set{Env: env}.keyed().plugin(p, c.driver)
		if _, err := ch.Read(t.Context(), "telegram:1", 1); err == nil || !strings.Contains(err.Error(), "ended before it listened") {
			t.Fatalf("%s: a script that never listens: %v", c.driver, err)
		}
		ch.Close()
		b, err := os.ReadFile(got)
		if err != nil {
			t.Fatalf("%s: the plugin wrote no environment: %v", c.driver, err)
		}
		var names []string
		for _, kv := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		for _, w := range c.want {
			if !slices.Contains(names, w) {
				t.Errorf("%s's plugin wasn't passed $%s (given %v)", c.driver, w, names)
			}
		}
		for _, n := range c.not {
			if slices.Contains(names, n) {
				t.Errorf("%s's plugin was passed $%s", c.driver, n)
			}
		}
	}
}
