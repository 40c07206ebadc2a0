package fakeprovider

import (
	"github.com/google/go-cmp/cmp"

	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/lnk-dev/link/model"
)

const anthropicBody = `{"model":"claude-opus-5-5","max_tokens":1024,"stream":true,
	"system":[{"type":"text","text":"You are Link.","cache_control":{"type":"ephemeral"}}],
	"tools":[{"name":"memory__search","input_schema":{"type":"object"}}],
	"messages":[{"role":"user","content":"find café"}]}`

func TestAnthropicStream(t *testing.T) {
	s := newServer(t)
	s.Script(scriptedCall)
	resp := post(t, s.URL()+"/v1/messages", map[string]string{"x-api-key": "k", "anthropic-version": "2023-06-01"}, anthropicBody)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readSSE(t, resp.Body)
	var names []string
	var thinking, sig, text, input string
	var textDeltas int
	for _, e := range events {
		d := e.decode(t)
		if d["type"] != e.name {
			t.Errorf("event %q carries type %v", e.name, d["type"])
		}
		if e.name == "content_block_delta" || e.name == "content_block_start" || e.name == "content_block_stop" {
			names = append(names, e.name+":"+jsonNum(d["index"]))
		} else {
			names = append(names, e.name)
		}
		switch path(d, "delta", "type") {
		case "thinking_delta":
			thinking += path(d, "delta", "thinking").(string)
		case "signature_delta":
			sig += path(d, "delta", "signature").(string)
		case "text_delta":
			text += path(d, "delta", "text").(string)
			textDeltas++
		case "input_json_delta":
			input += path(d, "delta", "partial_json").(string)
		}
		if e.name == "content_block_start" && path(d, "content_block", "type") == "tool_use" {
			if path(d, "content_block", "name") != "memory__search" || !strings.HasPrefix(path(d, "content_block", "id").(string), "toolu_") {
				t.Errorf("tool_use block start %v", d)
			}
		}
		if e.name == "message_delta" {
			if path(d, "delta", "stop_reason") != "tool_use" || path(d, "usage", "output_tokens") != 45.0 ||
				path(d, "usage", "cache_read_input_tokens") != 1000.0 || path(d, "usage", "input_tokens") != 120.0 {
				t.Errorf("message_delta %v", d)
			}
		}
		if e.name == "message_start" {
			if path(d, "message", "model") != "claude-opus-5-5" || path(d, "message", "usage", "cache_creation_input_tokens") != 200.0 {
				t.Errorf("message_start %v", d)
			}
		}
	}
	want := "message_start ping content_block_start:0 content_block_delta:0 content_block_delta:0 content_block_delta:0 content_block_delta:0 content_block_stop:0 " +
		"content_block_start:1 content_block_delta:1 content_block_delta:1 content_block_delta:1 content_block_stop:1 " +
		"content_block_start:2 content_block_delta:2 content_block_delta:2 content_block_stop:2 message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events:\n%s\nwant\n%s", got, want)
	}
	type reassembled struct {
		Thinking, Signature, Text, Input string
		TextDeltas                       int
	}
	wantR := reassembled{scriptedCall.Thinking, signature(scriptedCall.Thinking), scriptedCall.Text, scriptedCall.ToolCalls[0].Input, 3}
	if diff := cmp.Diff(wantR, reassembled{thinking, sig, text, input, textDeltas}); diff != "" {
		t.Errorf("reassembled (-want +got):\n%s", diff)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("recorded %d requests, want 1", len(reqs))
	}
	checkBody(t, reqs[0], bodyFacts{API: "anthropic", Model: "claude-opus-5-5", Stream: true, System: "You are Link.", LastUserText: "find café", Tools: []string{"memory__search"}, MaxTokens: 1024})
	if key, cache := reqs[0].Header.Get("X-Api-Key"), path(reqs[0].Decoded, "system", 0, "cache_control", "type"); key != "k" || cache != "ephemeral" {
		t.Errorf("recorded X-Api-Key %q, the system's cache_control %v", key, cache)
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAnthropicJSONAndErrors(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{Text: "hello", Usage: Usage{In: 3, Out: 1}}, Turn{Status: 400, ErrorBody: "prompt is too long: 210000 tokens > 200000 maximum"})
	body := strings.Replace(anthropicBody, `"stream":true`, `"stream":false`, 1)
	m := readJSON(t, post(t, s.URL()+"/v1/messages", map[string]string{"Authorization": "Bearer k"}, body), 200)
	if m["type"] != "message" || path(m, "content", 0, "text") != "hello" || m["stop_reason"] != "end_turn" || path(m, "usage", "input_tokens") != 3.0 {
		t.Errorf("message %v", m)
	}
	resp := post(t, s.URL()+"/v1/messages", map[string]string{"x-api-key": "k"}, body)
	raw := readJSON(t, resp, 400)
	if raw["type"] != "error" || path(raw, "error", "type") != "invalid_request_error" || resp.Header.Get("request-id") == "" {
		t.Errorf("error body %v", raw)
	}
	b, _ := json.Marshal(raw)
	if err := model.ClassifyError(400, string(b)); !errors.Is(err, model.ErrPromptTooLong) {
		t.Errorf("ClassifyError(fake's refusal) = %v, want ErrPromptTooLong", err)
	}
	// No key: 401 in Anthropic's shape; the request is still recorded.
	raw = readJSON(t, post(t, s.URL()+"/v1/messages", nil, body), 401)
	if path(raw, "error", "type") != "authentication_error" {
		t.Errorf("401 body %v", raw)
	}
	for _, bad := range []string{`{`, `{"model":"m","messages":[{"role":"user","content":"x"}]}`, `{"model":"m","max_tokens":1,"messages":[]}`,
		`{"model":"m","max_tokens":1,"messages":[{"role":"system","content":"x"}]}`, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"text":"x"}]}]}`} {
		raw = readJSON(t, post(t, s.URL()+"/v1/messages", map[string]string{"x-api-key": "k"}, bad), 400)
		if path(raw, "error", "type") != "invalid_request_error" || path(raw, "error", "message") == "" {
			t.Errorf("body %s: %v", bad, raw)
		}
	}
	m = readJSON(t, post(t, s.URL()+"/v1/messages/count_tokens", map[string]string{"x-api-key": "k"}, `{"model":"m","messages":[{"role":"user","content":"hello there"}]}`), 200)
	if n, _ := m["input_tokens"].(float64); n < 1 {
		t.Errorf("count_tokens %v", m)
	}
	if got := len(s.Requests()); got != 9 || s.Pending() != 0 {
		t.Errorf("%d requests recorded, %d turns pending", got, s.Pending())
	}
}

func anthropicClient(s *Server) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
}

// The official SDK streams a scripted answer, and its accumulated message
// is the script.
func TestAnthropicSDKStream(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{Text: "Hello from the script, in pieces.", Usage: Usage{In: 10, Out: 7, CacheRead: 5}}, scriptedCall)
	c := anthropicClient(s)
	ctx := context.Background()
	params := anthropic.MessageNewParams{
		Model:     "claude-opus-5-5",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name: "memory__search", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"query": map[string]any{"type": "string"}}},
		}}},
	}

	stream := c.Messages.NewStreaming(ctx, params)
	var msg anthropic.Message
	var pieces []string
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
			pieces = append(pieces, ev.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "Hello from the script, in pieces." || len(pieces) != 3 ||
		msg.StopReason != anthropic.StopReasonEndTurn || msg.Usage.InputTokens != 10 || msg.Usage.OutputTokens != 7 || msg.Usage.CacheReadInputTokens != 5 {
		t.Errorf("accumulated %+v from %d pieces", msg, len(pieces))
	}

	stream = c.Messages.NewStreaming(ctx, params)
	msg = anthropic.Message{}
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 3 {
		t.Fatalf("content %+v", msg.Content)
	}
	th, tx, tu := msg.Content[0].AsThinking(), msg.Content[1].AsText(), msg.Content[2].AsToolUse()
	var input map[string]any
	if err := json.Unmarshal(tu.Input, &input); err != nil {
		t.Fatalf("tool input %q: %v", tu.Input, err)
	}
	if th.Thinking != scriptedCall.Thinking || th.Signature != signature(scriptedCall.Thinking) || tx.Text != scriptedCall.Text ||
		tu.Name != "memory__search" || input["query"] != "café" || input["limit"] != 5.0 || string(tu.Input) != scriptedCall.ToolCalls[0].Input ||
		msg.StopReason != anthropic.StopReasonToolUse || msg.Usage.CacheCreationInputTokens != 200 || msg.Usage.OutputTokens != 45 {
		t.Errorf("accumulated %+v", msg)
	}

	// What the SDK sent: v2's Bearer key and its anthropic-version.
	r := s.Requests()[0]
	if r.Header.Get("Authorization") != "Bearer test-key" || r.Header.Get("Anthropic-Version") == "" || r.LastUserText != "hi" || r.Tools[0] != "memory__search" {
		t.Errorf("SDK sent %v, decoded %+v", r.Header, r)
	}
}

func TestAnthropicSDKErrors(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{Status: 400, ErrorBody: "prompt is too long: 300000 tokens > 200000 maximum"}, Turn{Text: "not streamed", Usage: Usage{In: 1, Out: 2}})
	c := anthropicClient(s)
	params := anthropic.MessageNewParams{Model: "claude-opus-5-5", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	_, err := c.Messages.New(context.Background(), params)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Error(), "prompt is too long") {
		t.Fatalf("err = %v", err)
	}
	if e := model.ClassifyError(apiErr.StatusCode, apiErr.RawJSON()); !errors.Is(e, model.ErrPromptTooLong) {
		t.Errorf("ClassifyError(%q) = %v", apiErr.RawJSON(), e)
	}
	msg, err := c.Messages.New(context.Background(), params)
	if err != nil || msg.Content[0].Text != "not streamed" || msg.Usage.OutputTokens != 2 {
		t.Errorf("New = %+v, %v", msg, err)
	}
}
