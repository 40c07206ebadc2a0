package fakeprovider

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sseEvent is one event of a server-sent event stream.
type sseEvent struct {
	name string
	data string
}

// readSSE parses a text/event-stream body by the SSE rules: fields up to a
// blank line, CRLF or LF line ends.
func readSSE(t *testing.T, body io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	var data []string
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if data != nil {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data = sseEvent{}, nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			cur.name = value
		case "data":
			data = append(data, value)
		case "":
		default:
			t.Fatalf("SSE line with unknown field: %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read SSE: %v", err)
	}
	if data != nil || cur.name != "" {
		t.Fatalf("SSE stream ends mid-event: %+v %q", cur, data)
	}
	return out
}

// decode parses an event's data as a JSON object.
func (e sseEvent) decode(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(e.data), &m); err != nil {
		t.Fatalf("event %q data %q: %v", e.name, e.data, err)
	}
	return m
}

// post sends body to the server with headers, as a real client would.
func post(t *testing.T, url string, header map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readJSON reads a response's body as a JSON object, checking its status.
func readJSON(t *testing.T, resp *http.Response, status int) map[string]any {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return m
}

// path walks a decoded JSON value: keys of objects, indexes of arrays.
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func newServer(t *testing.T) *Server {
	t.Helper()
	s := New()
	t.Cleanup(s.Close)
	return s
}

// scriptedCall is the turn most tests script: thinking, text in several
// chunks, a tool call, and usage with both caches.
var scriptedCall = Turn{
	Thinking:  "Let me look that up.",
	Text:      "I'll search your notes for ünïcode café <b>&</b>.",
	ToolCalls: []ToolCall{{Name: "memory__search", Input: `{"query":"café","limit":5}`}},
	Usage:     Usage{In: 120, Out: 45, CacheRead: 1000, CacheWrite: 200},
	CostUSD:   0.00123,
}

// bodyFacts is what a recorded request's body told the server, the fields
// of Request a test compares whole with cmp.Diff.
type bodyFacts struct {
	API          string
	Model        string
	Stream       bool
	System       string
	LastUserText string
	Tools        []string
	ToolChoice   string
	MaxTokens    int
}

// checkBody compares what got's body told the server with want.
func checkBody(t *testing.T, got Request, want bodyFacts) {
	t.Helper()
	if got.Err != nil {
		t.Errorf("recorded %s %s: %v", got.Method, got.Path, got.Err)
	}
	facts := bodyFacts{API: got.API, Model: got.Model, Stream: got.Stream, System: got.System, LastUserText: got.LastUserText, Tools: got.Tools, ToolChoice: got.ToolChoice, MaxTokens: got.MaxTokens}
	if diff := cmp.Diff(want, facts); diff != "" {
		t.Errorf("recorded %s (-want +got):\n%s", got.Path, diff)
	}
}
