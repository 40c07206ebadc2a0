package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Embedder embeds texts with a local model, for a hybrid ranking.
type Embedder interface {
	// Embed is a vector for each of texts, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Name names the model.
	Name() string
}

// Ollama is an Embedder over a local Ollama's /api/embed.
type Ollama struct {
	base  *url.URL
	model string
	hc    *http.Client

	mu    sync.Mutex
	cache map[[32]byte][]float32 // by text's hash, bounded by maxCached
}

// maxCached bounds the embeddings Ollama keeps in the process.
const maxCached = 20000

// NewOllama is the embedder of model at host (OLLAMA_HOST: a host and
// port, or a URL). A host that isn't this machine's loopback is
// refused: embeddings go to a runtime on this machine alone, never off it.
func NewOllama(host, model string) (*Ollama, error) {
	if model == "" {
		return nil, errors.New("no embedding model named")
	}
	raw := host
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("OLLAMA_HOST %q is no host", host)
	}
	h := u.Hostname()
	if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("OLLAMA_HOST %q is not this machine's loopback, and memory sends nothing off the machine", host)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(h, "11434")
	}
	return &Ollama{base: u, model: model, hc: &http.Client{Timeout: 30 * time.Second}, cache: map[[32]byte][]float32{}}, nil
}

// Name is the model's name.
func (o *Ollama) Name() string { return o.model }

// Embed embeds texts, those embedded before from the process's cache.
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([][32]byte, len(texts))
	var ask []string
	var at []int
	o.mu.Lock()
	for i, t := range texts {
		keys[i] = sha256.Sum256([]byte(t))
		if v, ok := o.cache[keys[i]]; ok {
			out[i] = v
		} else {
			ask = append(ask, t)
			at = append(at, i)
		}
	}
	o.mu.Unlock()
	if len(ask) == 0 {
		return out, nil
	}
	got, err := o.call(ctx, ask)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.cache)+len(got) > maxCached {
		clear(o.cache)
	}
	for j, v := range got {
		out[at[j]] = v
		o.cache[keys[at[j]]] = v
	}
	return out, nil
}

// Check asks the runtime for one embedding, so a model that isn't there
// is known before a search.
func (o *Ollama) Check(ctx context.Context) error {
	_, err := o.call(ctx, []string{"link"})
	return err
}

func (o *Ollama) call(ctx context.Context, texts []string) ([][]float32, error) {
	body, _ := json.Marshal(map[string]any{"model": o.model, "input": texts})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.base.JoinPath("api", "embed").String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embed: %s: %s", resp.Status, clip(strings.TrimSpace(string(b)), 200))
	}
	var r struct {
		Embeddings [][]float32 `json:"embeddings"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if len(r.Embeddings) != len(texts) {
		return nil, fmt.Errorf("embed: %d embeddings for %d texts", len(r.Embeddings), len(texts))
	}
	return r.Embeddings, nil
}

// cosine is the cosine similarity of a and b (0 when either is empty or
// their lengths differ).
func cosine(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// embed embeds texts with the Embedder.
func (m *Memory) embed(ctx context.Context, texts []string) ([][]float32, error) {
	return m.cfg.Embedder.Embed(ctx, texts)
}
