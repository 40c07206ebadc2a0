package memory_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lnk-dev/link/memory"
)

// ollama is a local runtime's /api/embed, as Ollama answers it, whose
// vectors say whether a text is about cats the feline way (1, 0), half
// (0.7, 0.7: "kitty") or not (0, 1).
func ollama(t *testing.T, calls *atomic.Int32) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/api/embed" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "nomic-embed-text" {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		var out [][]float32
		for _, in := range req.Input {
			switch {
			case strings.Contains(in, "feline") || in == "cat":
				out = append(out, []float32{1, 0})
			case strings.Contains(in, "kitty"):
				out = append(out, []float32{0.7, 0.7})
			default:
				out = append(out, []float32{0, 1})
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": out})
	}))
	t.Cleanup(s.Close)
	return s
}

// With a local embedding model, results are ranked by BM25 and the
// embeddings together (reciprocal rank fusion), and the answer says so;
// a runtime off the loopback is refused.
func TestHybridRanking(t *testing.T) {
	var calls atomic.Int32
	srv := ollama(t, &calls)
	o, err := memory.NewOllama(strings.TrimPrefix(srv.URL, "http://"), "nomic-embed-text")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"gpu.lan:11434", "10.0.0.2", "http://example.com"} {
		if _, err := memory.NewOllama(host, "m"); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("OLLAMA_HOST %s: %v", host, err)
		}
	}
	m, p := newMemory(t, t.TempDir())
	write(t, filepath.Join(p.Files(), "a.md"), "cat cat cat notes\n")
	write(t, filepath.Join(p.Files(), "b.md"), "cat cat feline\n")
	write(t, filepath.Join(p.Files(), "c.md"), "cat kitty with a longer line of other words to rank it lower\n")
	plain := search(t, m, "cat")
	if got := strings.Join(sources(plain), " "); got != "files/a.md:1 files/b.md:1 files/c.md:1" || plain.Ranking != "full text (BM25)" {
		t.Fatalf("BM25 alone: %s, %q", got, plain.Ranking)
	}
	if calls.Load() != 1 {
		t.Fatalf("%d calls to the runtime before it was given", calls.Load())
	}
	hm, _ := newMemoryWith(t, p, o)
	a, err := hm.Search(context.Background(), "cat", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sources(a), " "); got != "files/b.md:1 files/a.md:1 files/c.md:1" {
		t.Fatalf("hybrid: %s", got)
	}
	if a.Ranking != "hybrid: full text (BM25) and the local embedding model nomic-embed-text" {
		t.Fatalf("ranking %q", a.Ranking)
	}
}
