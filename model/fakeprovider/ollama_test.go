package fakeprovider

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lnk-dev/link/model"
)

func TestOllamaShowAndTags(t *testing.T) {
	s := newServer(t)
	m := readJSON(t, post(t, s.URL()+"/api/show", nil, `{"model":"qwen3:8b"}`), 200)
	if path(m, "model_info", "qwen3.context_length") != 40960.0 || strings.Contains(m["parameters"].(string), "num_ctx") {
		t.Errorf("default show %v", m)
	}
	s.AddModel(Model{Name: "llama3.1:8b", ContextLength: 131072, NumCtx: 8192})
	m = readJSON(t, post(t, s.URL()+"/api/show", nil, `{"name":"llama3.1:8b"}`), 200)
	params := m["parameters"].(string)
	if path(m, "model_info", "general.architecture") != "llama3" || path(m, "model_info", "llama3.context_length") != 131072.0 ||
		!strings.Contains(params, "num_ctx                        8192") || !strings.Contains(m["modelfile"].(string), "PARAMETER num_ctx 8192") {
		t.Errorf("show %v", m)
	}
	if readJSON(t, post(t, s.URL()+"/api/show", nil, `{}`), 400)["error"] != "model is required" {
		t.Error("show without a model isn't refused")
	}
	resp, err := http.Get(s.URL() + "/api/tags")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m = readJSON(t, resp, 200)
	if path(m, "models", 0, "name") != "llama3.1:8b" || path(m, "models", 1) != nil {
		t.Errorf("tags %v", m)
	}
}

func TestOllamaChatStream(t *testing.T) {
	s := newServer(t)
	s.Script(scriptedCall)
	body := `{"model":"qwen3:8b","messages":[{"role":"system","content":"You are Link."},{"role":"user","content":"find café"}],
		"tools":[{"type":"function","function":{"name":"memory__search","parameters":{"type":"object"}}}],"options":{"num_ctx":8192}}`
	resp := post(t, s.URL()+"/api/chat", nil, body)
	if resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}
	var text, thinking string
	var calls []any
	var lines []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
		text += path(m, "message", "content").(string)
		if th, ok := path(m, "message", "thinking").(string); ok {
			thinking += th
		}
		if cs, ok := path(m, "message", "tool_calls").([]any); ok {
			calls = append(calls, cs...)
		}
	}
	last := lines[len(lines)-1]
	if text != scriptedCall.Text || thinking != scriptedCall.Thinking || len(calls) != 1 || path(calls[0], "function", "arguments", "query") != "café" {
		t.Errorf("text %q thinking %q calls %v", text, thinking, calls)
	}
	if last["done"] != true || last["done_reason"] != "stop" || last["prompt_eval_count"] != 1320.0 || last["eval_count"] != 45.0 {
		t.Errorf("last line %v", last)
	}
	for _, l := range lines[:len(lines)-1] {
		if l["done"] != false {
			t.Errorf("line before the last is done: %v", l)
		}
	}
	checkBody(t, s.Requests()[0], bodyFacts{API: "ollama", Model: "qwen3:8b", Stream: true, System: "You are Link.", LastUserText: "find café", Tools: []string{"memory__search"}})
}

func TestOllamaChatWholeAndErrors(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{Text: "whole", StopReason: "max_tokens"}, Turn{Status: 500, ErrorBody: "the prompt exceeds the context window"})
	body := `{"model":"qwen3:8b","stream":false,"messages":[{"role":"user","content":"hi"}]}`
	m := readJSON(t, post(t, s.URL()+"/api/chat", nil, body), 200)
	if path(m, "message", "content") != "whole" || m["done_reason"] != "length" || m["done"] != true {
		t.Errorf("whole %v", m)
	}
	resp := post(t, s.URL()+"/api/chat", nil, body)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || !errors.Is(model.ClassifyError(resp.StatusCode, string(b)), model.ErrPromptTooLong) {
		t.Errorf("error %d %s", resp.StatusCode, b)
	}
	for _, bad := range []string{`{"messages":[]}`, `{"model":"m","messages":[{"role":"user","content":["x"]}]}`, `{"model":"m","stream":"yes"}`} {
		if e, _ := readJSON(t, post(t, s.URL()+"/api/chat", nil, bad), 400)["error"].(string); e == "" {
			t.Errorf("%s isn't refused with a message", bad)
		}
	}
	resp, err := http.Get(s.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "Ollama is running" {
		t.Errorf("GET / = %q", b)
	}
}
