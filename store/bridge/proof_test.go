package bridge_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/store/bridge"
	"github.com/lnk-dev/link/store/log"
)

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// signed is a call as the client would send it, its proof's parts apart
// so a test can spoil one.
type signed struct {
	method, uri string
	body        []byte
	millis      string
	nonce       string
	proof       string
}

func newSigned(key []byte, at time.Time, method, uri string, body []byte) signed {
	s := signed{method: method, uri: uri, body: body, millis: strconv.FormatInt(at.UnixMilli(), 10), nonce: strings.Repeat("ab", 16)}
	s.proof = bridge.Proof(key, s.millis, s.nonce, method, uri, body)
	return s
}

// send sends s to the bridge at base, with its headers as headers says
// (nil: all three), and gives the status, the answer's body and headers.
func (s signed) send(t *testing.T, base string, headers []string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(s.method, base+s.uri, bytes.NewReader(s.body))
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]string{"Link-Store-Time": s.millis, "Link-Store-Nonce": s.nonce, "Link-Store-Proof": s.proof}
	if headers == nil {
		headers = []string{"Link-Store-Time", "Link-Store-Nonce", "Link-Store-Proof"}
	}
	for _, h := range headers {
		req.Header.Set(h, set[h])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// TestProofs: a call is answered only with a proof of the key, of its
// time within the skew, of this very call, not seen before; every other
// gets 401 and nothing else, and the log never holds the key or a proof.
func TestProofs(t *testing.T) {
	clk := &clock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	var logged bytes.Buffer
	srv, err := bridge.NewServer(bridge.ServerConfig{
		Store:  log.Open(t.TempDir()),
		Key:    testKey,
		Now:    clk.Now,
		Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := listen(t, "tcp", srv)
	base := "http://" + cfg.Address
	now := clk.Now()
	ping := func(at time.Time) signed { return newSigned(testKey, at, "GET", "/v1/ping", nil) }
	appendCall := func(at time.Time) signed {
		return newSigned(testKey, at, "POST", "/v1/append?thread=default", []byte(`{"seq":1,"time":"2026-11-30T09:00:00Z","kind":"message","text":"hi"}`+"\n"))
	}

	if code, body, _ := ping(now).send(t, base, nil); code != http.StatusNoContent {
		t.Fatalf("a proved ping: %d %q", code, body)
	}

	refused := map[string]func() (int, string, http.Header){
		"no headers": func() (int, string, http.Header) { return ping(now.Add(time.Millisecond)).send(t, base, []string{}) },
		"no proof": func() (int, string, http.Header) {
			return ping(now.Add(2*time.Millisecond)).send(t, base, []string{"Link-Store-Time", "Link-Store-Nonce"})
		},
		"no time": func() (int, string, http.Header) {
			return ping(now.Add(3*time.Millisecond)).send(t, base, []string{"Link-Store-Nonce", "Link-Store-Proof"})
		},
		"no nonce": func() (int, string, http.Header) {
			return ping(now.Add(4*time.Millisecond)).send(t, base, []string{"Link-Store-Time", "Link-Store-Proof"})
		},
		"wrong key": func() (int, string, http.Header) {
			return newSigned([]byte("another-key"), now, "GET", "/v1/ping", nil).send(t, base, nil)
		},
		"key as its proof": func() (int, string, http.Header) {
			s := ping(now.Add(5 * time.Millisecond))
			s.proof = string(testKey)
			return s.send(t, base, nil)
		},
		"proof in capitals": func() (int, string, http.Header) {
			s := ping(now.Add(6 * time.Millisecond))
			s.proof = strings.ToUpper(s.proof)
			return s.send(t, base, nil)
		},
		"stale by 61s": func() (int, string, http.Header) { return ping(now.Add(-61*time.Second)).send(t, base, nil) },
		"ahead by 61s": func() (int, string, http.Header) { return ping(now.Add(61*time.Second)).send(t, base, nil) },
		"another time": func() (int, string, http.Header) {
			s := ping(now.Add(7 * time.Millisecond))
			s.millis = strconv.FormatInt(now.Add(8*time.Millisecond).UnixMilli(), 10)
			return s.send(t, base, nil)
		},
		"another nonce": func() (int, string, http.Header) {
			s := ping(now.Add(9 * time.Millisecond))
			s.nonce = strings.Repeat("cd", 16)
			return s.send(t, base, nil)
		},
		"another body": func() (int, string, http.Header) {
			s := appendCall(now)
			s.body = bytes.Replace(s.body, []byte("hi"), []byte("ho"), 1)
			return s.send(t, base, nil)
		},
		"another path": func() (int, string, http.Header) {
			s := appendCall(now.Add(10 * time.Millisecond))
			s.uri = "/v1/append?thread=telegram:42"
			return s.send(t, base, nil)
		},
		"another method": func() (int, string, http.Header) {
			s := ping(now.Add(11 * time.Millisecond))
			s.method = "POST"
			return s.send(t, base, nil)
		},
	}
	for name, send := range refused {
		code, body, h := send()
		if code != http.StatusUnauthorized || body != "" {
			t.Errorf("%s: %d %q, want 401 and nothing else", name, code, body)
		}
		if h.Get("WWW-Authenticate") != "" || h.Get("Content-Type") != "" {
			t.Errorf("%s: 401 says more: %v", name, h)
		}
	}
	// Nothing refused was written.
	if code, body, _ := newSigned(testKey, now.Add(12*time.Millisecond), "GET", "/v1/read?thread=default&from=1", nil).send(t, base, nil); code != http.StatusOK || body != "" {
		t.Fatalf("read after refused appends: %d %q, want none", code, body)
	}

	// Within the skew either way is answered.
	for _, d := range []time.Duration{-59 * time.Second, 59 * time.Second} {
		if code, _, _ := ping(now.Add(d)).send(t, base, nil); code != http.StatusNoContent {
			t.Errorf("a ping %v off: %d, want 204", d, code)
		}
	}

	// A call sent twice is answered once.
	s := appendCall(now.Add(20 * time.Millisecond))
	if code, body, _ := s.send(t, base, nil); code != http.StatusNoContent {
		t.Fatalf("append: %d %q", code, body)
	}
	if code, body, _ := s.send(t, base, nil); code != http.StatusUnauthorized || body != "" {
		t.Fatalf("append replayed: %d %q, want 401", code, body)
	}
	// Still refused near the end of its window, then stale.
	clk.add(59 * time.Second)
	if code, _, _ := s.send(t, base, nil); code != http.StatusUnauthorized {
		t.Fatalf("append replayed 59s on: %d, want 401", code)
	}
	clk.add(2 * time.Minute)
	if code, _, _ := s.send(t, base, nil); code != http.StatusUnauthorized {
		t.Fatalf("append replayed 3 minutes on: %d, want 401", code)
	}

	if n := strings.Count(logged.String(), "refused"); n < len(refused) {
		t.Errorf("%d refusals logged, want at least %d:\n%s", n, len(refused), logged.String())
	}
	if strings.Contains(logged.String(), string(testKey)) || strings.Contains(logged.String(), s.proof) {
		t.Fatalf("the log holds the key or a proof:\n%s", logged.String())
	}
}

// A client with the wrong key is refused at its dial, and says only that.
func TestDialWrongKey(t *testing.T) {
	s := serve(t, "unix")
	cfg := s.cfg
	cfg.Key = []byte("not-the-key")
	_, err := bridge.Dial(context.Background(), cfg)
	if !errors.Is(err, bridge.ErrRefused) {
		t.Fatalf("dial with the wrong key: %v, want ErrRefused", err)
	}
	if strings.Contains(err.Error(), "not-the-key") || strings.Contains(err.Error(), string(testKey)) {
		t.Fatalf("the error holds a key: %v", err)
	}
	// A client whose clock is off by more than the skew is refused too.
	cfg = s.cfg
	cfg.Now = func() time.Time { return time.Now().Add(-2 * time.Minute) }
	if _, err := bridge.Dial(context.Background(), cfg); !errors.Is(err, bridge.ErrRefused) {
		t.Fatalf("dial with a clock 2 minutes behind: %v, want ErrRefused", err)
	}
	// No key, or a key the contract refuses, isn't dialed at all.
	for _, key := range [][]byte{nil, []byte("with space")} {
		cfg.Key = key
		if _, err := bridge.Dial(context.Background(), cfg); err == nil {
			t.Errorf("dial with key %q: no error", key)
		}
	}
}
