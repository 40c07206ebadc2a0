package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/lnk-dev/link/model/scripted"
)

// responsesAPI is OpenAI's Responses API: POST /v1/responses, as JSON or
// as SSE semantic events (response.created, response.output_item.added,
// response.output_text.delta, response.function_call_arguments.delta,
// response.output_item.done, response.completed), as Codex speaks it.
type responsesAPI struct{ s *Server }

// namespaceSep joins a namespace tool's name and one of its functions'
// in Request.Tools ("mcp__probe.lookup"), and splits a ToolCall's name
// so into the function_call's namespace and name. The Responses API's
// names are letters, digits, _ and -, so the dot is never a name's own.
const namespaceSep = "."

type responsesRequest struct {
	Model        string          `json:"model"`
	Instructions json.RawMessage `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Tools        []struct {
		Type string `json:"type"`
		Name string `json:"name"`
		// Tools are a namespace tool's functions (Codex offers each MCP
		// server's tools as one namespace, mcp__SERVER).
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"tools"`
	ToolChoice      json.RawMessage `json:"tool_choice"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
}

func (a *responsesAPI) decode(r *Request) {
	var req responsesRequest
	if err := unmarshal(r.Body, &req); err != nil {
		r.Err = err
		return
	}
	r.Model, r.Stream = req.Model, req.Stream
	r.ToolChoice = toolChoiceString(req.ToolChoice)
	if req.MaxOutputTokens != nil {
		r.MaxTokens = *req.MaxOutputTokens
	}
	for _, t := range req.Tools {
		name := t.Name
		if name == "" {
			name = t.Type
		}
		if t.Type == "namespace" {
			for _, f := range t.Tools {
				r.Tools = append(r.Tools, name+namespaceSep+f.Name)
			}
			continue
		}
		r.Tools = append(r.Tools, name)
	}
	if req.Model == "" {
		r.Err = fmt.Errorf("missing required parameter: 'model'")
		return
	}
	instructions, err := contentText("instructions", req.Instructions, "input_text")
	if err != nil {
		r.Err = err
		return
	}
	system := []string{instructions}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		r.LastUserText = s
		r.System = joinNonEmpty(system...)
		return
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(req.Input) > 0 && string(req.Input) != "null" && json.Unmarshal(req.Input, &items) != nil {
		r.Err = fmt.Errorf("input: must be a string or an array of input items")
		return
	}
	for i, it := range items {
		if it.Type != "" && it.Type != "message" || it.Role == "" {
			continue
		}
		text, err := contentText(fmt.Sprintf("input[%d].content", i), it.Content, "input_text", "output_text", "text")
		if err != nil {
			r.Err = err
			return
		}
		switch it.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			if text != "" {
				r.LastUserText = text
			}
		}
	}
	r.System = joinNonEmpty(system...)
}

func (a *responsesAPI) auth(r *http.Request) string { return openAIAuth(r) }

func (a *responsesAPI) fail(w http.ResponseWriter, status int, msg string) {
	openAIFail(w, status, msg)
}

func (a *responsesAPI) serve(st *stream, r *Request) {
	t := a.s.take(r)
	if t.Status != 0 {
		a.fail(st.w, t.Status, t.ErrorBody)
		return
	}
	st.delay = t.Delay
	for i := range t.ToolCalls {
		if t.ToolCalls[i].ID == "" {
			t.ToolCalls[i].ID = a.s.id("call_")
		}
	}
	resp := obj{
		"id": a.s.id("resp_"), "object": "response", "created_at": time.Now().Unix(),
		"status": "in_progress", "error": nil, "incomplete_details": nil,
		"instructions": nil, "max_output_tokens": nil, "model": r.Model,
		"output": []any{}, "parallel_tool_calls": true, "previous_response_id": nil,
		"reasoning": obj{"effort": nil, "summary": nil}, "store": false,
		"text": obj{"format": obj{"type": "text"}}, "tool_choice": "auto", "tools": []any{},
		"truncation": "disabled", "usage": nil, "metadata": obj{},
	}
	// The items of the answer, whole, as output_item.done carries them.
	var reasoning, message obj
	var calls []obj
	if t.Thinking != "" {
		reasoning = obj{"id": a.s.id("rs_"), "type": "reasoning",
			"summary":           []any{obj{"type": "summary_text", "text": t.Thinking}},
			"encrypted_content": signature(t.Thinking)}
	}
	if t.Text != "" {
		message = obj{"id": a.s.id("msg_"), "type": "message", "status": "completed", "role": "assistant",
			"content": []any{obj{"type": "output_text", "text": t.Text, "annotations": []any{}}}}
	}
	for _, c := range t.ToolCalls {
		call := obj{"id": a.s.id("fc_"), "type": "function_call", "status": "completed",
			"call_id": c.ID, "name": c.Name, "arguments": c.Input}
		if ns, name, ok := strings.Cut(c.Name, namespaceSep); ok {
			call["namespace"], call["name"] = ns, name
		}
		calls = append(calls, call)
	}
	var output []any
	for _, it := range append([]obj{reasoning, message}, calls...) {
		if it != nil {
			output = append(output, it)
		}
	}
	final := func() obj {
		f := clone(resp)
		f["status"] = "completed"
		if t.StopReason == stopMaxTokens {
			f["status"] = "incomplete"
			f["incomplete_details"] = obj{"reason": "max_output_tokens"}
		}
		if output == nil {
			output = []any{}
		}
		f["output"] = output
		f["usage"] = responsesUsage(t)
		return f
	}
	if !r.Stream {
		if t.Hang {
			st.hang()
			return
		}
		writeJSON(st.w, http.StatusOK, final())
		return
	}
	st.start("text/event-stream; charset=utf-8")
	if t.Hang {
		st.hang()
		return
	}
	seq := 0
	send := func(typ string, fields obj) error {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		return st.event(typ, fields)
	}
	if send("response.created", obj{"response": resp}) != nil ||
		send("response.in_progress", obj{"response": resp}) != nil {
		return
	}
	index := 0
	if reasoning != nil && a.reasoning(send, index, reasoning, t.Thinking) != nil {
		return
	}
	if reasoning != nil {
		index++
	}
	if message != nil && a.message(send, index, message, t.Text) != nil {
		return
	}
	if message != nil {
		index++
	}
	for _, c := range calls {
		if a.call(send, index, c) != nil {
			return
		}
		index++
	}
	end := "response.completed"
	if t.StopReason == stopMaxTokens {
		end = "response.incomplete"
	}
	send(end, obj{"response": final()})
}

type sender func(typ string, fields obj) error

func (a *responsesAPI) reasoning(send sender, index int, item obj, text string) error {
	id := item["id"]
	added := obj{"id": id, "type": "reasoning", "summary": []any{}}
	if err := send("response.output_item.added", obj{"output_index": index, "item": added}); err != nil {
		return err
	}
	at := obj{"item_id": id, "output_index": index, "summary_index": 0}
	if err := send("response.reasoning_summary_part.added", with(at, "part", obj{"type": "summary_text", "text": ""})); err != nil {
		return err
	}
	for _, c := range scripted.Pieces(text, textChunks) {
		if err := send("response.reasoning_summary_text.delta", with(at, "delta", c)); err != nil {
			return err
		}
	}
	if err := send("response.reasoning_summary_text.done", with(at, "text", text)); err != nil {
		return err
	}
	if err := send("response.reasoning_summary_part.done", with(at, "part", obj{"type": "summary_text", "text": text})); err != nil {
		return err
	}
	return send("response.output_item.done", obj{"output_index": index, "item": item})
}

func (a *responsesAPI) message(send sender, index int, item obj, text string) error {
	id := item["id"]
	added := obj{"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}
	if err := send("response.output_item.added", obj{"output_index": index, "item": added}); err != nil {
		return err
	}
	at := obj{"item_id": id, "output_index": index, "content_index": 0}
	if err := send("response.content_part.added", with(at, "part", obj{"type": "output_text", "text": "", "annotations": []any{}})); err != nil {
		return err
	}
	for _, c := range scripted.Pieces(text, textChunks) {
		if err := send("response.output_text.delta", with(with(at, "delta", c), "logprobs", []any{})); err != nil {
			return err
		}
	}
	if err := send("response.output_text.done", with(with(at, "text", text), "logprobs", []any{})); err != nil {
		return err
	}
	if err := send("response.content_part.done", with(at, "part", obj{"type": "output_text", "text": text, "annotations": []any{}})); err != nil {
		return err
	}
	return send("response.output_item.done", obj{"output_index": index, "item": item})
}

func (a *responsesAPI) call(send sender, index int, item obj) error {
	added := clone(item)
	added["status"], added["arguments"] = "in_progress", ""
	if err := send("response.output_item.added", obj{"output_index": index, "item": added}); err != nil {
		return err
	}
	args := item["arguments"].(string)
	at := obj{"item_id": item["id"], "output_index": index}
	for _, p := range scripted.Pieces(string(compact(json.RawMessage(args))), 2) {
		if err := send("response.function_call_arguments.delta", with(at, "delta", p)); err != nil {
			return err
		}
	}
	if err := send("response.function_call_arguments.done", with(with(at, "arguments", args), "name", item["name"])); err != nil {
		return err
	}
	return send("response.output_item.done", obj{"output_index": index, "item": item})
}

func responsesUsage(t Turn) obj {
	u := obj{
		"input_tokens":          t.Usage.prompt(),
		"input_tokens_details":  obj{"cached_tokens": t.Usage.CacheRead},
		"output_tokens":         t.Usage.Out,
		"output_tokens_details": obj{"reasoning_tokens": int64(len(t.Thinking) / 4)},
		"total_tokens":          t.Usage.prompt() + t.Usage.Out,
	}
	if t.CostUSD != 0 {
		u["cost"] = t.CostUSD
	}
	return u
}

// with is a copy of o with one more field.
func with(o obj, k string, v any) obj {
	c := clone(o)
	c[k] = v
	return c
}

func clone(o obj) obj {
	c := make(obj, len(o)+1)
	for k, v := range o {
		c[k] = v
	}
	return c
}
