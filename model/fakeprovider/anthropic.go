package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/lnk-dev/link/model/scripted"
)

// anthropicAPI is Anthropic's Messages API: POST /v1/messages, as JSON or
// as SSE (message_start, content_block_start/delta/stop, message_delta,
// message_stop), and POST /v1/messages/count_tokens.
type anthropicAPI struct {
	s     *Server
	count bool
}

type anthropicRequest struct {
	Model     string          `json:"model"`
	MaxTokens *int            `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Stream bool `json:"stream"`
}

func (a *anthropicAPI) decode(r *Request) {
	var req anthropicRequest
	if err := unmarshal(r.Body, &req); err != nil {
		r.Err = err
		return
	}
	r.Model, r.Stream = req.Model, req.Stream && !a.count
	if req.MaxTokens != nil {
		r.MaxTokens = *req.MaxTokens
	}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	if req.ToolChoice != nil {
		r.ToolChoice = req.ToolChoice.Type
	}
	sys, err := contentText("system", req.System, "text")
	if err != nil {
		r.Err = err
		return
	}
	r.System = sys
	switch {
	case req.Model == "":
		r.Err = fmt.Errorf("model: Field required")
		return
	case req.MaxTokens == nil && !a.count:
		r.Err = fmt.Errorf("max_tokens: Field required")
		return
	case len(req.Messages) == 0:
		r.Err = fmt.Errorf("messages: at least one message is required")
		return
	}
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			r.Err = fmt.Errorf("messages.%d.role: Input should be 'user' or 'assistant'", i)
			return
		}
		text, err := contentText(fmt.Sprintf("messages.%d.content", i), m.Content, "text")
		if err != nil {
			r.Err = err
			return
		}
		if m.Role == "user" && text != "" {
			r.LastUserText = text
		}
	}
}

// auth takes the key as x-api-key (as anthropic-sdk-go v1 sends it) or as
// Authorization: Bearer (as v2 does).
func (a *anthropicAPI) auth(r *http.Request) string {
	if r.Header.Get("X-Api-Key") != "" || bearer(r) != "" {
		return ""
	}
	return "x-api-key header is required"
}

func (a *anthropicAPI) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("request-id", a.s.id("req_"))
	if isJSONObject(msg) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(msg))
		return
	}
	writeJSON(w, status, obj{"type": "error", "error": obj{"type": anthropicErrorType(status), "message": msg}})
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func (a *anthropicAPI) serve(st *stream, r *Request) {
	if a.count {
		writeJSON(st.w, http.StatusOK, obj{"input_tokens": max(1, len(r.Body)/4)})
		return
	}
	t := a.s.take(r)
	if t.Status != 0 {
		a.fail(st.w, t.Status, t.ErrorBody)
		return
	}
	st.delay = t.Delay
	st.w.Header().Set("request-id", a.s.id("req_"))
	id := a.s.id("msg_")
	for i := range t.ToolCalls {
		if t.ToolCalls[i].ID == "" {
			t.ToolCalls[i].ID = a.s.id("toolu_")
		}
	}
	if !r.Stream {
		if t.Hang {
			st.hang()
			return
		}
		msg := a.message(id, r.Model)
		msg["content"] = a.blocks(t)
		msg["stop_reason"] = t.StopReason
		msg["usage"] = a.usage(t.Usage, t.Usage.Out)
		writeJSON(st.w, http.StatusOK, msg)
		return
	}
	st.start("text/event-stream; charset=utf-8")
	if t.Hang {
		st.hang()
		return
	}
	a.stream(st, id, r.Model, t)
}

func (a *anthropicAPI) message(id, model string) obj {
	return obj{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "stop_details": nil,
		"container": nil,
	}
}

func (a *anthropicAPI) usage(u Usage, out int64) obj {
	return obj{
		"input_tokens":                u.In,
		"cache_creation_input_tokens": u.CacheWrite,
		"cache_read_input_tokens":     u.CacheRead,
		"output_tokens":               out,
		"cache_creation":              obj{"ephemeral_5m_input_tokens": u.CacheWrite, "ephemeral_1h_input_tokens": 0},
		"service_tier":                "standard",
	}
}

// blocks is the whole answer's content: thinking, text, tool calls.
func (a *anthropicAPI) blocks(t Turn) []any {
	var out []any
	if t.Thinking != "" {
		out = append(out, obj{"type": "thinking", "thinking": t.Thinking, "signature": signature(t.Thinking)})
	}
	if t.Text != "" {
		out = append(out, obj{"type": "text", "text": t.Text})
	}
	for _, c := range t.ToolCalls {
		out = append(out, obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": inputObject(c.Input)})
	}
	if out == nil {
		out = []any{}
	}
	return out
}

// stream sends the answer as Anthropic's SSE events.
func (a *anthropicAPI) stream(st *stream, id, model string, t Turn) {
	start := a.message(id, model)
	start["usage"] = a.usage(t.Usage, 1)
	if st.event("message_start", obj{"type": "message_start", "message": start}) != nil ||
		st.event("ping", obj{"type": "ping"}) != nil {
		return
	}
	index := 0
	block := func(startBlock obj, deltas []obj) error {
		if err := st.event("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": startBlock}); err != nil {
			return err
		}
		for _, d := range deltas {
			if err := st.event("content_block_delta", obj{"type": "content_block_delta", "index": index, "delta": d}); err != nil {
				return err
			}
		}
		err := st.event("content_block_stop", obj{"type": "content_block_stop", "index": index})
		index++
		return err
	}
	if t.Thinking != "" {
		var ds []obj
		for _, c := range scripted.Pieces(t.Thinking, textChunks) {
			ds = append(ds, obj{"type": "thinking_delta", "thinking": c})
		}
		ds = append(ds, obj{"type": "signature_delta", "signature": signature(t.Thinking)})
		if block(obj{"type": "thinking", "thinking": "", "signature": ""}, ds) != nil {
			return
		}
	}
	if t.Text != "" {
		var ds []obj
		for _, c := range scripted.Pieces(t.Text, textChunks) {
			ds = append(ds, obj{"type": "text_delta", "text": c})
		}
		if block(obj{"type": "text", "text": ""}, ds) != nil {
			return
		}
	}
	for _, c := range t.ToolCalls {
		var ds []obj
		for _, p := range scripted.Pieces(string(compact(inputObject(c.Input))), 2) {
			ds = append(ds, obj{"type": "input_json_delta", "partial_json": p})
		}
		if block(obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": obj{}}, ds) != nil {
			return
		}
	}
	if st.event("message_delta", obj{
		"type":  "message_delta",
		"delta": obj{"stop_reason": t.StopReason, "stop_sequence": nil},
		"usage": a.usage(t.Usage, t.Usage.Out),
	}) != nil {
		return
	}
	st.event("message_stop", obj{"type": "message_stop"})
}

// compact is JSON without its spaces, as a provider streams a call's input.
func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// isJSONObject says whether s is a JSON object, sent as it is.
func isJSONObject(s string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}
