package facts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/model/modeltest"
)

func TestLinkFile(t *testing.T) {
	f := Link()
	if len(f) < 10 {
		t.Fatalf("Link's file has %d models", len(f))
	}
	for _, name := range f.Names() {
		m := f[name]
		if m.Window <= 0 || m.Answer <= 0 || m.Answer > m.Window {
			t.Errorf("%s: %+v", name, m)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`["a/b"]` + "\nwindow = -1\n", "negative"},
		{`["a/b"]` + "\nwindwo = 100\n", "windwo is not a fact"},
		{`["a/b"]` + "\nwindow = \"big\"\n", "window"},
		{`[" "]` + "\nwindow = 1\n", "without a name"},
		{strings.Repeat("#", MaxFile+1), "over"},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%.40q) = %v, want an error saying %q", tc.in, err, tc.want)
		}
	}
}

// TestOrder: the user's file wins field by field, then what the runtime
// runs, then Link's, then [window] unknown.
func TestOrder(t *testing.T) {
	srv := modeltest.NewServer(t)
	srv.AddModel(fakeprovider.Model{Name: "llama3.1:8b", ContextLength: 131072, NumCtx: 8192})
	srv.AddModel(fakeprovider.Model{Name: "qwen3:8b", ContextLength: 40960})
	r := &Resolver{
		User: File{
			"anthropic/claude-opus-5-5": {Answer: 1000},  // answer only: the window stays Link's
			"ollama/qwen3:8b":           {Window: 30000}, // yours wins over the runtime
			"new/model":                 {Window: 50000, Answer: 4000},
		},
		Link:    Link(),
		Runtime: Ollama{BaseURL: srv.URL()},
		Unknown: 16384,
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		window     int
		windowFrom string
		answer     int
		answerFrom string
	}{
		{"anthropic/claude-opus-5-5", 1000000, FromLink, 1000, FromUser},
		{"ollama/qwen3:8b", 30000, FromUser, 30000, FromLink},     // the answer held to the window,
		{"ollama/llama3.1:8b", 8192, FromRuntime, 8192, FromLink}, // num_ctx 8192 holds Link's 32768 answer to the window
		{"new/model", 50000, FromUser, 4000, FromUser},
		{"nobody/knows", 16384, FromUnknown, 0, ""},
	} {
		f, err := r.Resolve(ctx, tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if f.Window != tc.window || f.WindowFrom != tc.windowFrom || f.Answer != tc.answer || f.AnswerFrom != tc.answerFrom {
			t.Errorf("%s: got window %d (%s), answer %d (%s); want %d (%s), %d (%s)", tc.name,
				f.Window, f.WindowFrom, f.Answer, f.AnswerFrom, tc.window, tc.windowFrom, tc.answer, tc.answerFrom)
		}
	}
}

// TestOllamaHeld: a trained window Ollama reports counts only up to the
// one it runs: the model's num_ctx, else the server's setting, else its
// default.
func TestOllamaHeld(t *testing.T) {
	srv := modeltest.NewServer(t)
	srv.AddModel(fakeprovider.Model{Name: "qwen3:8b", ContextLength: 40960})
	srv.AddModel(fakeprovider.Model{Name: "tiny:1b", ContextLength: 2048})
	ctx := context.Background()
	for _, tc := range []struct {
		model  string
		server int
		want   Shown
	}{
		{"qwen3:8b", 0, Shown{"ollama", 40960, DefaultOllamaWindow, "Ollama's default"}},
		{"qwen3:8b", 16384, Shown{"ollama", 40960, 16384, "OLLAMA_CONTEXT_LENGTH"}},
		{"tiny:1b", 0, Shown{"ollama", 2048, 2048, "Ollama's default"}},
	} {
		got, ok, err := Ollama{BaseURL: srv.URL(), ContextLength: tc.server}.Show(ctx, "ollama/"+tc.model)
		if err != nil || !ok || got != tc.want {
			t.Errorf("%s (server %d): got %+v %v %v, want %+v", tc.model, tc.server, got, ok, err, tc.want)
		}
	}
	if _, ok, err := (Ollama{BaseURL: srv.URL()}).Show(ctx, "anthropic/claude-opus-5-5"); ok || err != nil {
		t.Errorf("a model not Ollama's was shown: %v %v", ok, err)
	}
}

// TestRuntimeDown: a runtime that doesn't answer costs its fact, not the
// resolve, and is asked again only after CacheFor.
func TestRuntimeDown(t *testing.T) {
	now := time.Unix(0, 0)
	r := &Resolver{Link: Link(), Runtime: Ollama{BaseURL: "http://127.0.0.1:1", Timeout: time.Second}, Now: func() time.Time { return now }}
	f, err := r.Resolve(context.Background(), "ollama/qwen3:8b")
	if err == nil || f.Window != 40960 || f.WindowFrom != FromLink {
		t.Errorf("got %+v, %v; want Link's window and the runtime's error", f, err)
	}
	if _, err2 := r.Resolve(context.Background(), "ollama/qwen3:8b"); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second resolve: %v, want the cached %v", err2, err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	if f, err := ReadFile(filepath.Join(dir, "none.toml")); f != nil || err != nil {
		t.Errorf("missing file: %v %v", f, err)
	}
	p := filepath.Join(dir, "model-facts.toml")
	os.WriteFile(p, []byte("[\"x/y\"]\nwindow = 1234\n"), 0o600)
	f, err := ReadFile(p)
	if err != nil || f["x/y"].Window != 1234 {
		t.Errorf("got %v %v", f, err)
	}
	os.WriteFile(p, []byte("[\"x/y\"]\nwindow = -3\n"), 0o600)
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("a bad file's error doesn't name it: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(linkFile)
	f.Add([]byte("[\"a\"]\nwindow = 1\nanswer = 2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fl, err := Parse(b)
		if err != nil {
			return
		}
		for n, m := range fl {
			if m.Window < 0 || m.Answer < 0 || strings.TrimSpace(n) == "" {
				t.Fatalf("accepted %q: %+v", n, m)
			}
		}
	})
}

func FuzzParseShow(f *testing.F) {
	f.Add([]byte(`{"parameters":"num_ctx 8192","model_info":{"llama.context_length":131072}}`), 0)
	f.Add([]byte(`{"model_info":{"x.context_length":-5}}`), 100)
	f.Fuzz(func(t *testing.T, b []byte, server int) {
		s, err := ParseShow(b, server)
		if err != nil {
			return
		}
		if s.Runs <= 0 || (s.Trained > 0 && s.Runs > s.Trained) {
			t.Fatalf("shown %+v", s)
		}
	})
}
