package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
)

// configureSpec writes spec as the agent's spec.toml under home and runs
// lnk-link-harness configure on it, giving its exit code and output.
func configureSpec(t *testing.T, home, spec string) (code int, stdout, stderr string) {
	t.Helper()
	p, _ := store.For(home, "main")
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Root, "spec.toml"), []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	code = configure.Run([]string{"--home", home, "--agent", "main"}, map[string]string{}, &out, &errs)
	return code, out.String(), errs.String()
}

// TestConfigureThenServe: a spec configured, the real program started on
// it runs on it: its model named by an alias of [model.aliases], its
// [instructions] base the owner's file, its [window] max the window an
// earlier message leaves, and, the first model's provider down, its
// [model] fallback (an alias too) answering.
func TestConfigureThenServe(t *testing.T) {
	first, second := fakeprovider.New(), fakeprovider.New()
	defer second.Close()
	first.Script(fakeprovider.Turn{Text: "Opus answers."})
	second.Script(fakeprovider.Turn{Text: "Luna answers."})
	home := t.TempDir()
	p, _ := store.For(home, "main")
	if err := os.MkdirAll(p.Instructions(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Instructions(), "kestrel.md"), []byte("You are Kestrel, the owner's gardener."), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := configureSpec(t, home, `[model]
name = "big"
fallbacks = ["luna"]

[model.aliases]
big = "anthropic/claude-opus-5-5"
luna = "openai/gpt-6-luna"

[window]
max = 4096
compact_at = "never"

[instructions]
base = "instructions/kestrel.md"
`)
	if code != 0 {
		t.Fatalf("configure: %d %s", code, errs)
	}
	if !strings.Contains(out, "wrote "+p.Config()) {
		t.Fatalf("configure said %q", out)
	}
	env := map[string]string{
		model.EnvAnthropicKey: "ka", model.EnvAnthropicBaseURL: first.URL(),
		model.EnvOpenAIKey: "ko", model.EnvOpenAIBaseURL: second.URL() + "/v1",
	}
	m, _, stop := startEnv(t, home, env, "--model", "")
	defer stop()
	const thread = "telegram:27"
	// About 2,400 tokens each: the two don't fit a window of 4,096 with
	// its answer's and margin's shares, so the first leaves it.
	one := "FIRST-MARKER " + strings.Repeat("the roses want water ", 460)
	two := "SECOND-MARKER " + strings.Repeat("the tulips want shade ", 440)
	if a := say(t, m.URL(), thread, one); a != "Opus answers." {
		t.Fatalf("the first answer %q", a)
	}
	first.Close() // the first model's provider is down from here
	if a := say(t, m.URL(), thread, two); a != "Luna answers." {
		t.Fatalf("the second answer %q", a)
	}
	reqs := first.Requests()
	if len(reqs) != 1 || reqs[0].Model != "claude-opus-5-5" || !strings.Contains(reqs[0].LastUserText, "FIRST-MARKER") {
		t.Fatalf("the first provider was asked %+v", reqs)
	}
	if !strings.Contains(reqs[0].System, "You are Kestrel") {
		t.Fatalf("the system prompt is not the spec's base:\n%s", reqs[0].System)
	}
	reqs = second.Requests()
	if len(reqs) != 1 || reqs[0].Model != "gpt-6-luna" || !strings.Contains(reqs[0].LastUserText, "SECOND-MARKER") {
		t.Fatalf("the fallback was asked %+v", reqs)
	}
	if bytes.Contains(reqs[0].Body, []byte("FIRST-MARKER")) {
		t.Fatal("the first message is still in a window of 4,096 tokens")
	}
	if !strings.Contains(reqs[0].System, "You are Kestrel") {
		t.Fatalf("the fallback's system prompt is not the spec's base:\n%s", reqs[0].System)
	}
	events := readEvents(t, home, thread)
	if last := events[len(events)-1]; last.Text != "Luna answers." || !strings.Contains(last.Model, "gpt-6-luna") {
		t.Fatalf("the last event %+v", last)
	}
}

// TestConfigureRefused: a misspelled key, a value of the wrong type and a
// value out of its bounds are each refused naming the key and its line,
// as is no spec at all, and the config.json configured before is left
// whole, byte for byte, no temporary file beside it.
func TestConfigureRefused(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := configureSpec(t, home, "[model]\nname = \"anthropic/claude-opus-5-5\"\n\n[window]\nmax = 8192\n"); code != 0 {
		t.Fatalf("configure: %s", errs)
	}
	p, _ := store.For(home, "main")
	before, err := os.ReadFile(p.Config())
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(p.Root, "spec.toml")
	for _, c := range []struct{ name, spec, want string }{
		{"misspelled", "[model]\nname = \"x\"\n\n[window]\nmax = 8192\ncompactat = 0.5\n", spec + ": line 6: window.compactat: no such key"},
		{"wrong type", "[model]\nname = \"x\"\nfallbacks = \"openai/gpt-6-luna\"\n", spec + ": line 3: model.fallbacks: a TOML string where an array of strings is wanted"},
		{"out of bounds", "[model]\nname = \"x\"\n\n[window]\n\nmax = 100\n", spec + ": line 6: window.max: 100 is under 1024 tokens"},
		{"no such section", "[instructions]\nprelude = \"instructions/a.md\"\n", spec + `: line 2: instructions.prelude: instructions: no section "prelude"`},
		{"not TOML", "[model\n", spec + ": line 1:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := configureSpec(t, home, c.spec)
			if code != 1 || !strings.Contains(errs, c.want) || out != "" {
				t.Fatalf("configure gave %d, %q, %q; want 1 and %q", code, out, errs, c.want)
			}
			after, err := os.ReadFile(p.Config())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Fatalf("config.json was %s, is %s", before, after)
			}
		})
	}
	if err := os.Remove(spec); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := configure.Run([]string{"--home", home}, map[string]string{}, &out, &errs); code != 1 || !strings.Contains(errs.String(), "no spec at "+spec) {
		t.Fatalf("no spec: %d %q", code, errs.String())
	}
	entries, _ := os.ReadDir(p.Root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".config.json") {
			t.Fatalf("a temporary file %s is left", e.Name())
		}
	}
}
