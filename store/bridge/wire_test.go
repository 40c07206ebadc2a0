package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
	"github.com/lnk-dev/link/store/log"
)

// A served driver that keeps no tools refuses the tools calls in the
// words of the client's wire: tools_unsupported to a client that says
// Link-Store-Wire: 2 or later, tools_not_kept to one that says nothing
// (a first wire's client, which reads only that) or what isn't a version.
func TestToolsRefusalByWire(t *testing.T) {
	srv, err := bridge.NewServer(bridge.ServerConfig{Store: log.Open(t.TempDir()), Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	cfg := listen(t, "tcp", srv)
	at := time.Now()
	for i, tc := range []struct{ wire, code string }{
		{"", "tools_not_kept"},
		{"1", "tools_not_kept"},
		{"two", "tools_not_kept"},
		{"2", "tools_unsupported"},
		{"3", "tools_unsupported"},
	} {
		s := newSigned(testKey, at.Add(time.Duration(i)*time.Millisecond), "GET", "/v1/tools?thread=default", nil)
		req, err := http.NewRequest(s.method, "http://"+cfg.Address+s.uri, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Link-Store-Time", s.millis)
		req.Header.Set("Link-Store-Nonce", s.nonce)
		req.Header.Set("Link-Store-Proof", s.proof)
		if tc.wire != "" {
			req.Header.Set("Link-Store-Wire", tc.wire)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Code, Error string }
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusNotImplemented || body.Code != tc.code {
			t.Errorf("wire %q: %d %+v, %v; want 501 %s", tc.wire, resp.StatusCode, body, err, tc.code)
		}
	}
}

// A server of the first wire answers the tools calls of a driver that
// keeps none with tools_not_kept: this client reads it as
// store.ErrToolsUnsupported, as it reads tools_unsupported, and says on
// every call which wire it reads.
func TestToolsRefusalFirstWire(t *testing.T) {
	var mu sync.Mutex
	var wires []string
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		wires = append(wires, r.Header.Get("Link-Store-Wire"))
		mu.Unlock()
		if r.URL.Path == "/v1/ping" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotImplemented)
		w.Write([]byte(`{"code":"tools_not_kept","error":"tools of default: driver keeps no tools"}` + "\n"))
	}))
	defer first.Close()
	c, err := bridge.Dial(context.Background(), bridge.Config{Network: "tcp", Address: strings.TrimPrefix(first.URL, "http://"), Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ReadTools(context.Background(), "default"); !errors.Is(err, store.ErrToolsUnsupported) {
		t.Errorf("read tools: %v, want ErrToolsUnsupported", err)
	}
	if _, err := c.NarrowTools(context.Background(), "default", &[]string{"a"}); !errors.Is(err, store.ErrToolsUnsupported) {
		t.Errorf("narrow tools: %v, want ErrToolsUnsupported", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, w := range wires {
		if w != "2" {
			t.Fatalf("the client said Link-Store-Wire %q, want 2 on every call (%q)", w, wires)
		}
	}
}
