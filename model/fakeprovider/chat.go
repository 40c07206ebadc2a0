package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/lnk-dev/link/model/scripted"
)

// chatAPI is OpenAI's Chat Completions: POST /v1/chat/completions, as JSON
// or as SSE data chunks ending in data: [DONE], as OpenRouter and any
// OpenAI-compatible server speak it too.
type chatAPI struct{ s *Server }

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
}

func (a *chatAPI) decode(r *Request) {
	var req chatRequest
	if err := unmarshal(r.Body, &req); err != nil {
		r.Err = err
		return
	}
	r.Model, r.Stream = req.Model, req.Stream
	r.ToolChoice = toolChoiceString(req.ToolChoice)
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, t.Function.Name)
	}
	if req.MaxCompletionTokens != nil {
		r.MaxTokens = *req.MaxCompletionTokens
	} else if req.MaxTokens != nil {
		r.MaxTokens = *req.MaxTokens
	}
	if req.Model == "" {
		r.Err = fmt.Errorf("you must provide a model parameter")
		return
	}
	if len(req.Messages) == 0 {
		r.Err = fmt.Errorf("'messages' must contain at least one message")
		return
	}
	var system []string
	for i, m := range req.Messages {
		text, err := contentText(fmt.Sprintf("messages[%d].content", i), m.Content, "text", "input_text")
		if err != nil {
			r.Err = err
			return
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			if text != "" {
				r.LastUserText = text
			}
		case "assistant", "tool", "function":
		default:
			r.Err = fmt.Errorf("messages[%d].role: invalid value %q", i, m.Role)
			return
		}
	}
	r.System = joinNonEmpty(system...)
}

// toolChoiceString is a tool_choice as a string: none, auto, required, or
// the object as sent.
func toolChoiceString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(compact(raw))
}

func (a *chatAPI) auth(r *http.Request) string { return openAIAuth(r) }

func openAIAuth(r *http.Request) string {
	if bearer(r) != "" {
		return ""
	}
	return "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
}

func (a *chatAPI) fail(w http.ResponseWriter, status int, msg string) { openAIFail(w, status, msg) }

// openAIFail answers an error in OpenAI's shape, which OpenRouter and the
// Responses API share.
func openAIFail(w http.ResponseWriter, status int, msg string) {
	if isJSONObject(msg) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(msg))
		return
	}
	typ, code := "invalid_request_error", any(nil)
	switch {
	case status == 401:
		code = "invalid_api_key"
	case status == 429:
		typ, code = "requests", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	writeJSON(w, status, obj{"error": obj{"message": msg, "type": typ, "param": nil, "code": code}})
}

// chatFinish is a stop reason in Chat Completions' words.
func chatFinish(stop string) string {
	switch stop {
	case stopToolUse:
		return "tool_calls"
	case stopMaxTokens:
		return "length"
	case stopRefusal:
		return "content_filter"
	}
	return "stop"
}

func chatUsage(t Turn) obj {
	details := obj{"cached_tokens": t.Usage.CacheRead}
	if t.Usage.CacheWrite != 0 {
		details["cache_write_tokens"] = t.Usage.CacheWrite
	}
	u := obj{
		"prompt_tokens":         t.Usage.prompt(),
		"completion_tokens":     t.Usage.Out,
		"total_tokens":          t.Usage.prompt() + t.Usage.Out,
		"prompt_tokens_details": details,
	}
	if t.CostUSD != 0 {
		u["cost"] = t.CostUSD
	}
	return u
}

func (a *chatAPI) serve(st *stream, r *Request) {
	var req chatRequest
	json.Unmarshal(r.Body, &req)
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	t := a.s.take(r)
	if t.Status != 0 {
		a.fail(st.w, t.Status, t.ErrorBody)
		return
	}
	st.delay = t.Delay
	id, created := a.s.id("chatcmpl-"), time.Now().Unix()
	for i := range t.ToolCalls {
		if t.ToolCalls[i].ID == "" {
			t.ToolCalls[i].ID = a.s.id("call_")
		}
	}
	if !r.Stream {
		if t.Hang {
			st.hang()
			return
		}
		msg := obj{"role": "assistant", "content": nil, "refusal": nil}
		if t.Text != "" {
			msg["content"] = t.Text
		}
		if t.Thinking != "" {
			msg["reasoning"] = t.Thinking
		}
		if len(t.ToolCalls) > 0 {
			var calls []any
			for _, c := range t.ToolCalls {
				calls = append(calls, obj{"id": c.ID, "type": "function", "function": obj{"name": c.Name, "arguments": c.Input}})
			}
			msg["tool_calls"] = calls
		}
		writeJSON(st.w, http.StatusOK, obj{
			"id": id, "object": "chat.completion", "created": created, "model": r.Model,
			"choices": []any{obj{"index": 0, "message": msg, "logprobs": nil, "finish_reason": chatFinish(t.StopReason)}},
			"usage":   chatUsage(t),
		})
		return
	}
	st.start("text/event-stream; charset=utf-8")
	if t.Hang {
		st.hang()
		return
	}
	chunk := func(delta obj, finish any) obj {
		c := obj{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": r.Model,
			"choices": []any{obj{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
		if includeUsage {
			c["usage"] = nil
		}
		return c
	}
	send := func(delta obj) error { return st.event("", chunk(delta, nil)) }
	if send(obj{"role": "assistant", "content": ""}) != nil {
		return
	}
	for _, c := range scripted.Pieces(t.Thinking, textChunks) {
		if send(obj{"reasoning": c}) != nil {
			return
		}
	}
	for _, c := range scripted.Pieces(t.Text, textChunks) {
		if send(obj{"content": c}) != nil {
			return
		}
	}
	for i, c := range t.ToolCalls {
		head := obj{"index": i, "id": c.ID, "type": "function", "function": obj{"name": c.Name, "arguments": ""}}
		if send(obj{"tool_calls": []any{head}}) != nil {
			return
		}
		for _, p := range scripted.Pieces(string(compact(json.RawMessage(c.Input))), 2) {
			if send(obj{"tool_calls": []any{obj{"index": i, "function": obj{"arguments": p}}}}) != nil {
				return
			}
		}
	}
	if st.event("", chunk(obj{}, chatFinish(t.StopReason))) != nil {
		return
	}
	if includeUsage {
		if st.event("", obj{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": r.Model,
			"choices": []any{}, "usage": chatUsage(t),
		}) != nil {
			return
		}
	}
	st.event("", "[DONE]")
}
