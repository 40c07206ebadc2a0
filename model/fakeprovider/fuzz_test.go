package fakeprovider

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzPaths are the endpoints that decode a body, each with its key header.
var fuzzPaths = []struct{ path, header, value string }{
	{"/v1/messages", "x-api-key", "k"},
	{"/v1/messages/count_tokens", "x-api-key", "k"},
	{"/v1/chat/completions", "Authorization", "Bearer k"},
	{"/v1/responses", "Authorization", "Bearer k"},
	{"/v1beta/models/g:streamGenerateContent?alt=sse", "x-goog-api-key", "k"},
	{"/v1beta/models/g:generateContent", "x-goog-api-key", "k"},
	{"/v1beta/models/g:countTokens", "x-goog-api-key", "k"},
	{"/api/chat", "", ""},
	{"/api/show", "", ""},
}

// Any body to any endpoint is answered, never a panic: 200, or 400 with
// an error in the provider's shape.
func FuzzRequestBody(f *testing.F) {
	for _, seed := range []string{
		anthropicBody, geminiBody, `{}`, `[]`, `null`, ``, `{"model":"m"}`, `{"model":5}`,
		`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":7}]}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"input_text","text":"x"}]}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"x"}]},{"type":"function_call_output","call_id":"c","output":"o"}],"stream":true}`,
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"OBJECT","properties":{"a":{"anyOf":[{"type":"string"}]}}}}}`,
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":["null","object"],"properties":{"a":{"properties":{"b":{}}}}}}}`,
		`{"model":"m","messages":[{"role":"user","content":"x","images":["AAAA"]}],"stream":false}`,
		`{"model":"m"} {"model":"n"}`, "\xef\xbb\xbf{}", `{"model":"m","messages":[{"role":"user","content":"\ud800"}]}`,
	} {
		for i := range fuzzPaths {
			f.Add(uint8(i), seed)
		}
	}
	s := &Server{closing: make(chan struct{})}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		p := fuzzPaths[int(which)%len(fuzzPaths)]
		s.mu.Lock()
		s.reqs, s.script = nil, nil
		s.mu.Unlock()
		req := httptest.NewRequest(http.MethodPost, p.path, strings.NewReader(body))
		if p.header != "" {
			req.Header.Set(p.header, p.value)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		switch w.Code {
		case 200:
		case 400:
			var e map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e["error"] == nil {
				t.Fatalf("%s %q: 400 body %q isn't an error shape", p.path, body, w.Body.String())
			}
			msg, _ := path(e, "error", "message").(string)
			if s, ok := e["error"].(string); ok {
				msg = s
			}
			if msg == "" {
				t.Fatalf("%s %q: 400 without a message: %q", p.path, body, w.Body.String())
			}
		default:
			t.Fatalf("%s %q: status %d %q", p.path, body, w.Code, w.Body.String())
		}
		if rs := s.Requests(); len(rs) != 1 || string(rs[0].Body) != body {
			t.Fatalf("request not recorded as sent: %+v", rs)
		}
	})
}
