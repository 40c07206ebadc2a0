package openai

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestParseChunk(t *testing.T) {
	cost := func(e extras) float64 {
		if e.Usage == nil || e.Usage.Cost == nil {
			return -1
		}
		return *e.Usage.Cost
	}
	e := parseChunk([]byte(`{"id":"x","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4,"cache_write_tokens":3},"cost":0.5}}`))
	if e.Usage == nil || *e.Usage != (usage{Prompt: 10, Completion: 2, CacheRead: 4, CacheWrite: 3, Cost: e.Usage.Cost}) || cost(e) != 0.5 {
		t.Errorf("usage chunk: %+v", e.Usage)
	}
	if e := parseChunk([]byte(`{"choices":[{"delta":{"content":"hi"}}],"usage":null}`)); e.Usage != nil || e.Reasoning != "" || e.Error != "" {
		t.Errorf("a text chunk with usage null: %+v", e)
	}
	if e := parseChunk([]byte(`{"choices":[{"delta":{"reasoning":"a"}},{"delta":{"reasoning_content":"b"}}]}`)); e.Reasoning != "ab" {
		t.Errorf("reasoning %q", e.Reasoning)
	}
	if e := parseChunk([]byte(`{"error":{"message":"context length exceeded","code":400}}`)); e.Error == "" {
		t.Error("an error chunk read as none")
	}
	if e := parseChunk([]byte(`{"usage":{"prompt_tokens":"ten"}}`)); e.Usage != nil {
		t.Errorf("a chunk that isn't the format: %+v", e)
	}
}

// Any bytes: no panic, and what parseChunk finds is in the chunk.
func FuzzParseChunk(f *testing.F) {
	f.Add([]byte(`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4},"cost":0.5}}`))
	f.Add([]byte(`{"choices":[{"delta":{"reasoning":"a"}}]}`))
	f.Add([]byte(`{"error":"x"}`))
	f.Add([]byte(`{"usage":`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		e := parseChunk(raw)
		if (e.Usage != nil || e.Reasoning != "" || e.Error != "") && !json.Valid(raw) {
			t.Fatalf("extras %+v from invalid JSON %q", e, raw)
		}
		if e.Error != "" && !json.Valid([]byte(e.Error)) {
			t.Fatalf("error %q isn't JSON", e.Error)
		}
	})
}

// Any chunks, a line each: no panic, and calls only in order.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"a","arguments":"{\"x\""}}]}}]}
{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}`))
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":7}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a answer
		for _, line := range bytes.Split(data, []byte("\n")) {
			var c chunk
			if json.Unmarshal(line, &c) != nil {
				continue
			}
			n, deltas := len(a.calls), 0
			for _, ch := range c.Choices {
				deltas += len(ch.Delta.ToolCalls)
			}
			if a.add(&c); len(a.calls) > n+deltas {
				t.Fatalf("%d calls after %d, from %d deltas", len(a.calls), n, deltas)
			}
		}
		if len(a.calls) > maxCalls {
			t.Fatalf("%d calls", len(a.calls))
		}
	})
}
