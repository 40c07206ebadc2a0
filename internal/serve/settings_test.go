package serve

import (
	"testing"

	"github.com/lnk-dev/link/store"
)

func TestSettings(t *testing.T) {
	s, err := ParseSettings([]byte(`{"model":{"name":"anthropic/claude-x","aliases":{"fast":"anthropic/claude-y"},"answer":900},"storage":{"conversations":"compact"},"chat":{"verbose":false},"other":1}`), "")
	if err != nil || s.Model != "anthropic/claude-x" || s.Alias("fast") != "anthropic/claude-y" || s.Conversations != "compact" || s.Verbose == nil || *s.Verbose || s.MaxTokens != 900 {
		t.Fatalf("%+v, %v", s, err)
	}
	if s, _ := ParseSettings([]byte(`{"model":{"name":"a/b"}}`), "offline"); s.Model != "offline" {
		t.Fatalf("--model doesn't win: %+v", s)
	}
	for _, bad := range []string{`[`, `{"storage":{"conversations":"Bad!"}}`, `{"model":{"answer":-1}}`, `{"model":"x"}`} {
		if _, err := ParseSettings([]byte(bad), ""); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	p, _ := store.For(t.TempDir(), "main")
	if s, err := ReadSettings(t.Context(), p, ""); err != nil || s.Model != "" {
		t.Fatalf("a missing config.json: %+v, %v", s, err)
	}
}

// FuzzSettings proves config.json's reader never panics and that what it
// accepts keeps conversations a way the store names.
func FuzzSettings(f *testing.F) {
	f.Add([]byte(`{"model":{"name":"a/b","aliases":{"x":"y"}},"storage":{"conversations":"log"}}`), "")
	f.Add([]byte(`{"chat":{"verbose":true}}`), "offline")
	f.Fuzz(func(t *testing.T, b []byte, model string) {
		s, err := ParseSettings(b, model)
		if err != nil {
			return
		}
		if s.Conversations != "" && store.ParseKind(s.Conversations) != nil || s.MaxTokens < 0 {
			t.Fatalf("accepted %+v", s)
		}
		if model != "" && s.Model != model {
			t.Fatal("--model lost")
		}
	})
}
