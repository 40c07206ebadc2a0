package fakeprovider

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/lnk-dev/link/model"
)

func openAIClient(s *Server, base string) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.URL()+base), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
}

func chatParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "openai/gpt-6-luna",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are Link."), openai.UserMessage("find café")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "memory__search", Parameters: shared.FunctionParameters{"type": "object"},
		})},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
}

// The official SDK streams a text answer and a tool call through Chat
// Completions (at OpenRouter's /api/v1 too), and its accumulator rebuilds
// the script, usage and OpenRouter's cost included.
func TestChatSDKStream(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{Text: "Plain answer, streamed.", Usage: Usage{In: 8, Out: 4}}, scriptedCall)
	ctx := context.Background()

	c := openAIClient(s, "/v1")
	stream := c.Chat.Completions.NewStreaming(ctx, chatParams())
	var acc openai.ChatCompletionAccumulator
	deltas := 0
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			deltas++
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	m := acc.Choices[0]
	type plain struct {
		Content, FinishReason string
		Deltas                int
		In, Out               int64
	}
	if diff := cmp.Diff(plain{"Plain answer, streamed.", "stop", 3, 8, 4}, plain{m.Message.Content, string(m.FinishReason), deltas, acc.Usage.PromptTokens, acc.Usage.CompletionTokens}); diff != "" {
		t.Errorf("accumulated (-want +got):\n%s", diff)
	}

	c = openAIClient(s, "/api/v1")
	stream = c.Chat.Completions.NewStreaming(ctx, chatParams())
	acc = openai.ChatCompletionAccumulator{}
	var finished []openai.FinishedChatCompletionToolCall
	var costRaw string
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		if f, ok := ch.Usage.JSON.ExtraFields["cost"]; ok {
			costRaw = f.Raw()
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	m = acc.Choices[0]
	if m.Message.Content != scriptedCall.Text || len(m.Message.ToolCalls) != 1 || m.FinishReason != "tool_calls" {
		t.Fatalf("accumulated %+v", m)
	}
	call := m.Message.ToolCalls[0]
	if call.Function.Name != "memory__search" || call.Function.Arguments != scriptedCall.ToolCalls[0].Input || !strings.HasPrefix(call.ID, "call_") {
		t.Errorf("tool call %+v", call)
	}
	if len(finished) != 1 || finished[0].Arguments != scriptedCall.ToolCalls[0].Input {
		t.Errorf("JustFinishedToolCall gave %+v", finished)
	}
	u := acc.Usage
	// The accumulator keeps usage's known fields; cost is read off the chunk.
	cost, err := strconv.ParseFloat(costRaw, 64)
	if err != nil {
		t.Errorf("cost %q: %v", costRaw, err)
	}
	type usage struct {
		In, Cached, Out int64
		Cost            float64
	}
	if diff := cmp.Diff(usage{1320, 1000, 45, scriptedCall.CostUSD}, usage{u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.CompletionTokens, cost}); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}

	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("recorded %d requests, want 2", len(reqs))
	}
	if reqs[1].Path != "/api/v1/chat/completions" || reqs[0].Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("second request to %s, first with Authorization %q", reqs[1].Path, reqs[0].Header.Get("Authorization"))
	}
	checkBody(t, reqs[0], bodyFacts{API: "chat", Model: "openai/gpt-6-luna", Stream: true, System: "You are Link.", LastUserText: "find café", Tools: []string{"memory__search"}})
}

func TestChatRawAndErrors(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{Text: "ab"}, Turn{Status: 400, ErrorBody: "This model's maximum context length is 128000 tokens."}, Turn{Text: "whole", Thinking: "hm", Usage: Usage{In: 2, Out: 1}, CostUSD: 0.5})
	body := `{"model":"gpt","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	resp := post(t, s.URL()+"/v1/chat/completions", map[string]string{"Authorization": "Bearer k"}, body)
	events := readSSE(t, resp.Body)
	if len(events) == 0 || events[len(events)-1].data != "[DONE]" {
		t.Fatalf("stream %v does not end with [DONE]", events)
	}
	var text string
	for _, e := range events[:len(events)-1] {
		d := e.decode(t)
		if e.name != "" || d["object"] != "chat.completion.chunk" {
			t.Errorf("chunk %q %v", e.name, d)
		}
		if _, ok := d["usage"]; ok {
			t.Errorf("usage sent without stream_options.include_usage: %v", d)
		}
		if s, ok := path(d, "choices", 0, "delta", "content").(string); ok {
			text += s
		}
	}
	if text != "ab" {
		t.Errorf("text %q", text)
	}

	raw := readJSON(t, post(t, s.URL()+"/v1/chat/completions", map[string]string{"Authorization": "Bearer k"}, body), 400)
	if path(raw, "error", "type") != "invalid_request_error" {
		t.Errorf("error %v", raw)
	}
	c := openAIClient(s, "/v1")
	_, err := c.Chat.Completions.New(context.Background(), chatParams())
	if err != nil {
		t.Fatal(err)
	}
	s.Script(Turn{Status: 400, ErrorBody: "This model's maximum context length is 128000 tokens."})
	_, err = c.Chat.Completions.New(context.Background(), chatParams())
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 {
		t.Fatalf("err = %v", err)
	}
	if e := model.ClassifyError(apiErr.StatusCode, apiErr.RawJSON()); !errors.Is(e, model.ErrPromptTooLong) {
		t.Errorf("ClassifyError(%q) = %v", apiErr.RawJSON(), e)
	}
	raw = readJSON(t, post(t, s.URL()+"/v1/chat/completions", nil, body), 401)
	if path(raw, "error", "code") != "invalid_api_key" {
		t.Errorf("401 %v", raw)
	}
	for _, bad := range []string{`[]`, `{"messages":[{"role":"user","content":"x"}]}`, `{"model":"m","messages":[]}`, `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, `{"model":"m","messages":[{"role":"user","content":5}]}`} {
		raw = readJSON(t, post(t, s.URL()+"/v1/chat/completions", map[string]string{"Authorization": "Bearer k"}, bad), 400)
		if msg, _ := path(raw, "error", "message").(string); msg == "" {
			t.Errorf("%s: %v", bad, raw)
		}
	}
}

func TestChatJSON(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{Text: "whole", Thinking: "hm", Usage: Usage{In: 2, Out: 1, CacheWrite: 3}, CostUSD: 0.5})
	c := openAIClient(s, "/v1")
	res, err := c.Chat.Completions.New(context.Background(), chatParams())
	if err != nil {
		t.Fatal(err)
	}
	if res.Choices[0].Message.Content != "whole" || res.Usage.PromptTokens != 5 || res.Choices[0].Message.JSON.ExtraFields["reasoning"].Raw() != `"hm"` ||
		res.Usage.JSON.ExtraFields["cost"].Raw() != "0.5" || res.Usage.PromptTokensDetails.CacheWriteTokens != 3 {
		t.Errorf("completion %+v", res)
	}
}

func responsesParams() responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:        "gpt-6-luna",
		Instructions: openai.String("You are Link."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("find café")},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
			Name: "memory__search", Parameters: map[string]any{"type": "object"}, Strict: openai.Bool(false),
		}}},
	}
}

// The official SDK streams the Responses API's events, and the completed
// response holds the script.
func TestResponsesSDKStream(t *testing.T) {
	s := newServer(t)
	s.Script(scriptedCall)
	c := openAIClient(s, "/v1")
	stream := c.Responses.NewStreaming(context.Background(), responsesParams())
	var text, args, summary string
	var types []string
	var done responses.Response
	seq := int64(0)
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != seq {
			t.Errorf("event %s has sequence %d, want %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq++
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			text += ev.Delta
		case "response.function_call_arguments.delta":
			args += ev.Delta
		case "response.reasoning_summary_text.delta":
			summary += ev.Delta
		case "response.completed":
			done = ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text != scriptedCall.Text || args != scriptedCall.ToolCalls[0].Input || summary != scriptedCall.Thinking {
		t.Errorf("streamed text %q args %q summary %q", text, args, summary)
	}
	if types[0] != "response.created" || types[len(types)-1] != "response.completed" {
		t.Errorf("events %v", types)
	}
	if done.Status != "completed" || done.OutputText() != scriptedCall.Text || len(done.Output) != 3 {
		t.Fatalf("completed %+v", done)
	}
	fc := done.Output[2].AsFunctionCall()
	if fc.Name != "memory__search" || fc.Arguments != scriptedCall.ToolCalls[0].Input || !strings.HasPrefix(fc.CallID, "call_") {
		t.Errorf("function call %+v", fc)
	}
	if rs := done.Output[0].AsReasoning(); len(rs.Summary) != 1 || rs.Summary[0].Text != scriptedCall.Thinking {
		t.Errorf("reasoning %+v", rs)
	}
	u := done.Usage
	if u.InputTokens != 1320 || u.InputTokensDetails.CachedTokens != 1000 || u.OutputTokens != 45 || u.JSON.ExtraFields["cost"].Raw() != "0.00123" {
		t.Errorf("usage %+v", u)
	}
	checkBody(t, s.Requests()[0], bodyFacts{API: "responses", Model: "gpt-6-luna", Stream: true, System: "You are Link.", LastUserText: "find café", Tools: []string{"memory__search"}})
}

func TestResponsesJSONAndItems(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{Text: "cut", StopReason: "max_tokens"})
	c := openAIClient(s, "/v1")
	p := responsesParams()
	out := responses.ResponseInputItemParamOfFunctionCallOutput("found")
	out.OfFunctionCallOutput.CallID = openai.String("call_1")
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("earlier", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfMessage("reply", responses.EasyInputMessageRoleAssistant),
		responses.ResponseInputItemParamOfFunctionCall(`{}`, "call_1", "memory__search"),
		out,
		responses.ResponseInputItemParamOfMessage("latest", responses.EasyInputMessageRoleUser),
	}}
	res, err := c.Responses.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputText() != "cut" || res.Status != "incomplete" || res.IncompleteDetails.Reason != "max_output_tokens" {
		t.Errorf("response %+v", res)
	}
	if r := s.Requests()[0]; r.LastUserText != "latest" || r.Stream {
		t.Errorf("recorded %+v", r)
	}
	raw := readJSON(t, post(t, s.URL()+"/v1/responses", map[string]string{"Authorization": "Bearer k"}, `{"model":"m","input":7}`), 400)
	if path(raw, "error", "type") != "invalid_request_error" {
		t.Errorf("error %v", raw)
	}
}

func TestModelsList(t *testing.T) {
	s := newServer(t)
	s.AddModel(Model{Name: "claude-opus-5-5", ContextLength: 200000})
	oc, ac := openAIClient(s, "/v1"), anthropicClient(s)
	page, err := oc.Models.List(context.Background())
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != "claude-opus-5-5" {
		t.Fatalf("OpenAI models %+v, %v", page, err)
	}
	apage, err := ac.Models.List(context.Background(), anthropic.ModelListParams{})
	if err != nil || len(apage.Data) != 1 || apage.Data[0].ID != "claude-opus-5-5" || apage.Data[0].DisplayName != "claude-opus-5-5" {
		t.Fatalf("Anthropic models %+v, %v", apage, err)
	}
}

// TestResponsesNamespaceTools: a namespace tool's functions are recorded
// as NAMESPACE.NAME, and a call scripted by that name goes out as the
// function_call's namespace and name, as Codex reads MCP tools' calls.
func TestResponsesNamespaceTools(t *testing.T) {
	s := newServer(t)
	s.Script(Turn{ToolCalls: []ToolCall{{ID: "call_1", Name: "mcp__probe.lookup", Input: `{}`}}})
	raw := readJSON(t, post(t, s.URL()+"/v1/responses", map[string]string{"Authorization": "Bearer k"},
		`{"model":"m","input":"hi","tools":[{"type":"function","name":"exec_command"},
		{"type":"namespace","name":"mcp__probe","tools":[{"type":"function","name":"lookup"},{"type":"function","name":"list"}]},
		{"type":"web_search"}]}`), 200)
	want := []string{"exec_command", "mcp__probe.lookup", "mcp__probe.list", "web_search"}
	if diff := cmp.Diff(want, s.Requests()[0].Tools); diff != "" {
		t.Errorf("tools recorded (-want +got):\n%s", diff)
	}
	if ns, name := path(raw, "output", 0, "namespace"), path(raw, "output", 0, "name"); ns != "mcp__probe" || name != "lookup" {
		t.Errorf("the call went out as namespace %v, name %v: %v", ns, name, raw)
	}
}
