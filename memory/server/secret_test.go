package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/lnk-dev/link/memory/server"
	"github.com/lnk-dev/link/store"
)

// lockedBuffer is a log's bytes, written from the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A memory server on 127.0.0.1 answers at the address with its secret
// alone: a request anywhere else on its port (no secret, part of it,
// another server's, the secret with more after it) is refused 404 with
// the rule and no session, and one with it is answered. The secret is
// each server's own (NewSecret) and never in the log, at its most talkative.
func TestSecretAddress(t *testing.T) {
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	m, err := open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var log lockedBuffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	start := func() *server.Running {
		r, err := server.Start(context.Background(), server.Handler(m, server.Options{Logger: logger}), "127.0.0.1:0", server.NewSecret())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	r, other := start(), start()
	u, err := url.Parse(r.URL())
	if err != nil {
		t.Fatal(err)
	}
	secret, found := strings.CutPrefix(u.Path, "/mcp/")
	if !found || len(secret) < 40 || u.Host != r.Host() || strings.Contains(r.Host(), secret) {
		t.Fatalf("address %q (host %q): no secret in its path", r.URL(), r.Host())
	}
	ou, _ := url.Parse(other.URL())
	if ou.Path == u.Path {
		t.Fatal("two servers share a secret")
	}

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curious","version":"1"}}}`
	base := "http://" + r.Host()
	for _, path := range []string{"/", "/mcp", "/mcp/", "/mcp/" + secret[:len(secret)-1], "/mcp/" + secret + "/", "/mcp/" + secret + "x", "/mcp/" + strings.ToUpper(secret), ou.Path, "/" + secret, "/mcp/%2e%2e/mcp/" + secret} {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			req, err := http.NewRequest(method, base+path, strings.NewReader(initialize))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "only at the address $LNK_MEMORY names") || resp.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("%s %s: %d %q, session %q; want refused 404", method, path, resp.StatusCode, body, resp.Header.Get("Mcp-Session-Id"))
			}
			if strings.Contains(string(body), secret) {
				t.Errorf("%s %s: the refusal says the secret", method, path)
			}
		}
	}

	s := connect(t, r.URL())
	list, err := s.ListTools(t.Context(), nil)
	if err != nil || len(list.Tools) != 6 {
		t.Fatalf("with its secret: %v, %v", list, err)
	}
	if got := ok(t, s, "remember", map[string]any{"note": "the secret path works"}); !strings.Contains(got, "Remembered") {
		t.Fatal(got)
	}
	s.Close()
	if log.String() == "" {
		t.Log("the server logged nothing")
	}
	for _, x := range []string{secret, ou.Path, r.URL()} {
		if strings.Contains(log.String(), x) {
			t.Fatalf("the log holds the secret:\n%s", log.String())
		}
	}
}
