package facts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultOllamaWindow is the window Ollama runs a model with when neither
// the model (its num_ctx) nor the server (OLLAMA_CONTEXT_LENGTH) says
// another: whatever it was trained for, Ollama sends it no more.
const DefaultOllamaWindow = 4096

// maxShow bounds an /api/show answer read.
const maxShow = 4 << 20

// Ollama asks an Ollama server how it runs a model (POST /api/show): the
// window it was trained with (model_info's <arch>.context_length), held to
// the one Ollama runs it with: its num_ctx parameter, else the server's
// OLLAMA_CONTEXT_LENGTH (ContextLength), else DefaultOllamaWindow. Only
// ollama/<name> models are its own.
type Ollama struct {
	BaseURL string
	Client  *http.Client // nil: http.DefaultClient
	// ContextLength is OLLAMA_CONTEXT_LENGTH as the server was started
	// with, when known ("" or 0: not set).
	ContextLength int
	// Timeout bounds a call; 0 is 3 s.
	Timeout time.Duration
}

// Show asks the server of name (ollama/<model>).
func (o Ollama) Show(ctx context.Context, name string) (Shown, bool, error) {
	m, ok := strings.CutPrefix(name, "ollama/")
	if !ok || m == "" {
		return Shown{}, false, nil
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, _ := json.Marshal(map[string]string{"model": m})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(o.BaseURL, "/")+"/api/show", bytes.NewReader(body))
	if err != nil {
		return Shown{}, false, fmt.Errorf("ollama show %s: %w", m, err)
	}
	req.Header.Set("Content-Type", "application/json")
	c := o.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return Shown{}, false, fmt.Errorf("ollama show %s: %w", m, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxShow+1))
	if err != nil {
		return Shown{}, false, fmt.Errorf("ollama show %s: %w", m, err)
	}
	if len(b) > maxShow {
		return Shown{}, false, fmt.Errorf("ollama show %s: answer over %d bytes", m, maxShow)
	}
	if resp.StatusCode == http.StatusNotFound {
		return Shown{}, false, nil // a model it doesn't have
	}
	if resp.StatusCode != http.StatusOK {
		return Shown{}, false, fmt.Errorf("ollama show %s: %s", m, resp.Status)
	}
	s, err := ParseShow(b, o.ContextLength)
	if err != nil {
		return Shown{}, false, fmt.Errorf("ollama show %s: %w", m, err)
	}
	return s, true, nil
}

// ParseShow reads an /api/show answer: the trained window from
// model_info's <arch>.context_length, the window run from the parameters'
// num_ctx, else serverCtx (OLLAMA_CONTEXT_LENGTH) when positive, else
// DefaultOllamaWindow; Runs is never more than Trained when that is known.
func ParseShow(b []byte, serverCtx int) (Shown, error) {
	var show struct {
		Parameters string                     `json:"parameters"`
		ModelInfo  map[string]json.RawMessage `json:"model_info"`
	}
	if err := json.Unmarshal(b, &show); err != nil {
		return Shown{}, err
	}
	s := Shown{Runtime: "ollama"}
	for k, v := range show.ModelInfo {
		if !strings.HasSuffix(k, ".context_length") {
			continue
		}
		var n int64
		if json.Unmarshal(v, &n) == nil && n > 0 && n < 1<<31 {
			s.Trained = int(n)
		}
	}
	sc := bufio.NewScanner(strings.NewReader(show.Parameters))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				s.Runs, s.RunsWhy = n, "the model's num_ctx"
			}
		}
	}
	switch {
	case s.Runs > 0:
	case serverCtx > 0:
		s.Runs, s.RunsWhy = serverCtx, "OLLAMA_CONTEXT_LENGTH"
	default:
		s.Runs, s.RunsWhy = DefaultOllamaWindow, "Ollama's default"
	}
	if s.Trained > 0 && s.Runs > s.Trained {
		s.Runs = s.Trained
	}
	return s, nil
}
