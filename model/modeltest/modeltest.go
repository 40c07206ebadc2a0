// Package modeltest holds what the tests of Link's model providers share:
// a clock that moves at each reading, the deltas of a call gathered, the
// messages of a request, and a walk through decoded JSON. The fake
// provider they call is model/fakeprovider's (fakeprovider.Start).
package modeltest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// StepClock is a clock that moves on a second at each reading, from
// 2026-11-30 12:00 UTC.
func StepClock() func() time.Time {
	var mu sync.Mutex
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
}

// Collect gathers the deltas of a call: its On is a call's onDelta.
type Collect struct {
	Text, Thinking []string
	// LastMore is the last delta's More: a stream's last never says it.
	LastMore bool
}

// On keeps d's text or thinking, and refuses a delta with both.
func (c *Collect) On(d model.Delta) error {
	if d.Text != "" && d.Thinking != "" {
		return fmt.Errorf("a delta with both text and thinking: %+v", d)
	}
	c.LastMore = d.More
	if d.Text != "" {
		c.Text = append(c.Text, d.Text)
	}
	if d.Thinking != "" {
		c.Thinking = append(c.Thinking, d.Thinking)
	}
	return nil
}

// Ignore is an onDelta that keeps nothing.
func Ignore(model.Delta) error { return nil }

// User is a user's message of parts.
func User(parts ...model.Part) model.Message {
	return model.Message{Role: model.RoleUser, Parts: parts}
}

// Assistant is the assistant's message of parts.
func Assistant(parts ...model.Part) model.Message {
	return model.Message{Role: model.RoleAssistant, Parts: parts}
}

// Ask is a request to model m of one user's message, text.
func Ask(m, text string) model.Request {
	return model.Request{Model: m, Messages: []model.Message{User(model.Text(text))}}
}

// At follows a path of keys (string) and indexes (int, negative from
// the end) through decoded JSON; nil where the path leads nowhere.
func At(v any, path ...any) any {
	for _, k := range path {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k < 0 {
				k += len(a)
			}
			if k < 0 || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// NewServer starts a fake provider (model/fakeprovider) closed with the
// test.
func NewServer(tb testing.TB) *fakeprovider.Server {
	tb.Helper()
	s := fakeprovider.New()
	tb.Cleanup(s.Close)
	return s
}

// StreamServer starts a server that answers every request with body as
// it is, an event stream, closed when tb ends; it returns its URL: a
// provider's stream as the test writes it, broken or not.
func StreamServer(tb testing.TB, body string) string {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}
