package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/model/fakeprovider"
)

// TestModelShow: each fact's source is said, yours over the runtime's
// over Link's, and a model nobody describes gets [window] unknown.
func TestModelShow(t *testing.T) {
	srv := fakeprovider.New()
	defer srv.Close()
	srv.AddModel(fakeprovider.Model{Name: "llama3.1:8b", ContextLength: 131072, NumCtx: 8192})
	file := filepath.Join(t.TempDir(), "model-facts.toml")
	os.WriteFile(file, []byte("[\"anthropic/claude-opus-5-5\"]\nanswer = 1000\n"), 0o600)
	env := map[string]string{"OLLAMA_HOST": srv.URL()}
	for _, tc := range []struct {
		model string
		want  []string
	}{
		{"anthropic/claude-opus-5-5", []string{"window  1,000,000 tokens  (Link's facts)", "answer  1,000 tokens  (your file, " + file + ")", "sent    200,000 tokens"}},
		{"ollama/llama3.1:8b", []string{"window  8,192 tokens  (the runtime on this machine)", "ollama   runs it with 8,192 tokens (the model's num_ctx), trained for 131,072", "sent    8,192 tokens"}},
		{"nobody/knows", []string{"window  32,768 tokens  (nobody describes it: [window] unknown)", "answer  not known"}},
	} {
		var out, errb bytes.Buffer
		code := runModelShow(t.Context(), []string{"--facts", file, tc.model}, env, &out, &errb)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.model, code, errb.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.model, w, out.String())
			}
		}
	}
	os.WriteFile(file, []byte("[\"x/y\"]\nwindwo = 5\n"), 0o600)
	var out, errb bytes.Buffer
	if code := runModelShow(t.Context(), []string{"--facts", file, "x/y"}, env, &out, &errb); code != 1 || !strings.Contains(errb.String(), "windwo is not a fact") {
		t.Errorf("a bad file: exit %d, %q", code, errb.String())
	}
}
