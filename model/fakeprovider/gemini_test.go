package fakeprovider

import (
	"github.com/google/go-cmp/cmp"

	"encoding/json"
	"io"
	"strings"
	"testing"
)

const geminiBody = `{"contents":[{"role":"user","parts":[{"text":"find café"}]}],
	"systemInstruction":{"parts":[{"text":"You are Link."}]},
	"tools":[{"functionDeclarations":[{"name":"memory__search","parameters":{"type":"object"}}]}],
	"generationConfig":{"maxOutputTokens":512}}`

func TestGeminiSSE(t *testing.T) {
	s := newServer(t)
	s.Script(scriptedCall)
	resp := post(t, s.URL()+"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", map[string]string{"x-goog-api-key": "k"}, geminiBody)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readSSE(t, resp.Body)
	var text, thought string
	var calls []any
	for i, e := range events {
		d := e.decode(t)
		for _, p := range path(d, "candidates", 0, "content", "parts").([]any) {
			switch {
			case path(p, "thought") == true:
				thought += path(p, "text").(string)
			case path(p, "functionCall") != nil:
				calls = append(calls, path(p, "functionCall"))
			default:
				text += path(p, "text").(string)
			}
		}
		last := i == len(events)-1
		if fr := path(d, "candidates", 0, "finishReason"); (fr == "STOP") != last {
			t.Errorf("chunk %d finishReason %v", i, fr)
		}
		if last {
			u := path(d, "usageMetadata")
			if path(u, "promptTokenCount") != 1320.0 || path(u, "candidatesTokenCount") != 45.0 || path(u, "cachedContentTokenCount") != 1000.0 || path(u, "totalTokenCount") != 1365.0 {
				t.Errorf("usage %v", u)
			}
			if d["modelVersion"] != "gemini-2.5-pro" || d["responseId"] == "" {
				t.Errorf("last chunk %v", d)
			}
		}
	}
	if len(events) != 7 || text != scriptedCall.Text || thought != scriptedCall.Thinking || len(calls) != 1 {
		t.Fatalf("%d events: text %q thought %q calls %v", len(events), text, thought, calls)
	}
	if path(calls[0], "name") != "memory__search" || path(calls[0], "args", "query") != "café" || path(calls[0], "args", "limit") != 5.0 {
		t.Errorf("call %v", calls[0])
	}
	checkBody(t, s.Requests()[0], bodyFacts{API: "gemini", Model: "gemini-2.5-pro", Stream: true, System: "You are Link.", LastUserText: "find café", Tools: []string{"memory__search"}, MaxTokens: 512})
}

func TestGeminiJSONArrayAndWhole(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{Text: "abcdef"}, Turn{Text: "whole", ToolCalls: []ToolCall{{ID: "c1", Name: "f", Input: `{"a":1}`}}, StopReason: "max_tokens"})
	// Without alt=sse the stream is one JSON array; the key may be ?key=.
	resp := post(t, s.URL()+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=k", nil, geminiBody)
	b, _ := io.ReadAll(resp.Body)
	var arr []map[string]any
	if err := json.Unmarshal(b, &arr); err != nil || len(arr) != 3 {
		t.Fatalf("array stream %s: %v", b, err)
	}
	m := readJSON(t, post(t, s.URL()+"/v1beta/models/gemini-2.5-flash:generateContent", map[string]string{"x-goog-api-key": "k"}, geminiBody), 200)
	if path(m, "candidates", 0, "content", "parts", 0, "text") != "whole" || path(m, "candidates", 0, "content", "parts", 1, "functionCall", "id") != "c1" ||
		path(m, "candidates", 0, "finishReason") != "MAX_TOKENS" {
		t.Errorf("generateContent %v", m)
	}
	m = readJSON(t, post(t, s.URL()+"/v1beta/models/gemini-2.5-flash:countTokens", map[string]string{"x-goog-api-key": "k"}, geminiBody), 200)
	if n, _ := m["totalTokens"].(float64); n < 1 {
		t.Errorf("countTokens %v", m)
	}
}

// A request for JSON by a schema, as Gemini CLI asks who speaks next, is
// answered from its schema and takes no scripted turn.
func TestGeminiSchemaAnswer(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{Text: "the scripted answer"})
	body := `{"contents":[{"role":"user","parts":[{"text":"who speaks next?"}]}],
		"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object",
		"properties":{"reasoning":{"type":"string"},"next_speaker":{"type":"string","enum":["user","model"]},"n":{"type":"integer"},"ok":{"type":"boolean"},"tags":{"type":"array"}},
		"required":["reasoning","next_speaker"]}}}`
	m := readJSON(t, post(t, s.URL()+"/v1beta/models/gemini-2.5-flash:generateContent", map[string]string{"x-goog-api-key": "k"}, body), 200)
	text, _ := path(m, "candidates", 0, "content", "parts", 0, "text").(string)
	var got map[string]any
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("schema answer %q: %v", text, err)
	}
	if diff := cmp.Diff(map[string]any{"next_speaker": "user", "reasoning": "", "n": 0.0, "ok": false, "tags": []any{}}, got); diff != "" {
		t.Fatalf("schema answer (-want +got):\n%s", diff)
	}
	// Gemini's own Schema, types in capitals.
	body = strings.Replace(strings.Replace(body, `"responseJsonSchema"`, `"responseSchema"`, 1), `"type":"object"`, `"type":"OBJECT"`, 1)
	m = readJSON(t, post(t, s.URL()+"/v1beta/models/gemini-2.5-flash:generateContent", map[string]string{"x-goog-api-key": "k"}, body), 200)
	if text, _ := path(m, "candidates", 0, "content", "parts", 0, "text").(string); !strings.Contains(text, `"next_speaker":"user"`) {
		t.Errorf("Schema answer %q", text)
	}
	if s.Pending() != 1 {
		t.Errorf("a schema request took a scripted turn")
	}
}

func TestGeminiErrors(t *testing.T) {
	s := newServer(t)
	url := s.URL() + "/v1beta/models/gemini-2.5-pro:generateContent"
	m := readJSON(t, post(t, url, nil, geminiBody), 401)
	if path(m, "error", "status") != "UNAUTHENTICATED" || path(m, "error", "code") != 401.0 {
		t.Errorf("401 %v", m)
	}
	for _, bad := range []string{`{}`, `{"contents":[{"role":"robot","parts":[{"text":"x"}]}]}`, `{"contents":"x"}`, `nope`} {
		m = readJSON(t, post(t, url, map[string]string{"x-goog-api-key": "k"}, bad), 400)
		if path(m, "error", "status") != "INVALID_ARGUMENT" {
			t.Errorf("%s: %v", bad, m)
		}
	}
	m = readJSON(t, post(t, s.URL()+"/v1beta/models/gemini-2.5-pro:embedContent", map[string]string{"x-goog-api-key": "k"}, geminiBody), 404)
	if path(m, "error", "status") != "NOT_FOUND" {
		t.Errorf("404 %v", m)
	}
	s.Script(Turn{Status: 429, ErrorBody: "Resource has been exhausted"})
	m = readJSON(t, post(t, url, map[string]string{"x-goog-api-key": "k"}, geminiBody), 429)
	if path(m, "error", "status") != "RESOURCE_EXHAUSTED" || path(m, "error", "message") != "Resource has been exhausted" {
		t.Errorf("429 %v", m)
	}
}
