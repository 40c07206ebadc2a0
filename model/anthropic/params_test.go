package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/modeltest"
)

// Any request makes a body the API takes: JSON, at most MaxBreakpoints
// breakpoints, no empty text block, roles alternating, every call's input
// an object, thinking only with its signature.
func FuzzParams(f *testing.F) {
	f.Add("hello", "image/png", "iVBORw0KGgo=", `{"q":1}`, `{"type":"object"}`, "sig", uint16(0xffff))
	f.Add("", "application/pdf", "JVBERi0=", `[1]`, `not json`, "", uint16(0x0f0f))
	f.Add("x", "text/plain", "!!!", "", "", "s", uint16(1))
	f.Fuzz(func(t *testing.T, text, mime, data, input, schema, sig string, shape uint16) {
		var req model.Request
		req.Model = testModel
		for i := range 3 {
			req.System = append(req.System, model.Section{Text: text[:min(len(text), i)], Cache: shape&(1<<i) != 0})
		}
		if shape&(1<<3) != 0 {
			req.Tools = []model.Tool{{Name: "a__b", Schema: schema}, {Name: "c__d"}}
		}
		parts := []model.Part{
			model.Text(text), model.Image(mime, data), model.Document(mime, "f", data), model.TextDocument(mime, "g", text),
			model.Audio(mime, data), model.ToolUse("toolu_1", "a__b", input), model.ToolResult("toolu_1", text, shape&1 != 0),
			{Kind: model.KindThinking, Text: text, Signature: sig}, {Kind: "unknown", Text: text},
		}
		for i := range 8 {
			role := model.RoleUser
			if shape&(1<<(4+i)) != 0 {
				role = model.RoleAssistant
			}
			req.Messages = append(req.Messages, model.Message{Role: role, Parts: []model.Part{parts[i%len(parts)], parts[(i*5+int(shape))%len(parts)]}})
		}
		p := &Provider{maxTokens: DefaultMaxTokens}
		body, err := json.Marshal(p.params(req))
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var decoded map[string]any
		if err := json.Unmarshal(body, &decoded); err != nil {
			t.Fatalf("body %s: %v", body, err)
		}
		var marks []string
		cacheMarks(decoded, "", &marks)
		if len(marks) > MaxBreakpoints {
			t.Fatalf("%d breakpoints: %v", len(marks), marks)
		}
		msgs, _ := decoded["messages"].([]any)
		prev := ""
		for i, m := range msgs {
			role, _ := modeltest.At(m, "role").(string)
			if role == prev {
				t.Fatalf("messages %d and %d are both %s", i-1, i, role)
			}
			prev = role
			blocks, _ := modeltest.At(m, "content").([]any)
			if len(blocks) == 0 {
				t.Fatalf("message %d is empty", i)
			}
			for _, b := range blocks {
				switch modeltest.At(b, "type") {
				case "text":
					if modeltest.At(b, "text") == "" {
						t.Fatalf("an empty text block in %s", body)
					}
				case "tool_use":
					if _, ok := modeltest.At(b, "input").(map[string]any); !ok {
						t.Fatalf("input %v isn't an object", modeltest.At(b, "input"))
					}
				case "thinking":
					if role != "assistant" || modeltest.At(b, "signature") == "" {
						t.Fatalf("thinking %v in a %s message", b, role)
					}
				}
			}
		}
	})
}

// Thinking goes back as it came: a block with its signature, a redacted
// one as its data; thinking without a signature (another provider's) and
// thinking in a user message are left out.
func TestThinkingSentBack(t *testing.T) {
	p := &Provider{maxTokens: DefaultMaxTokens}
	req := model.Request{Model: testModel, Messages: []model.Message{
		modeltest.User(model.Text("hi"), model.ThinkingPart(model.Thinking{Text: "not mine", Signature: "s"})),
		modeltest.Assistant(
			model.ThinkingPart(model.Thinking{Text: "first", Signature: "sig1"}),
			model.ThinkingPart(model.Thinking{Redacted: "EncryptedBlob"}),
			model.ThinkingPart(model.Thinking{Text: "OpenRouter's, unsigned"}),
			model.Text("answer"),
		),
	}}
	body, err := json.Marshal(p.params(req))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	u, a := modeltest.At(d, "messages", 0, "content"), modeltest.At(d, "messages", 1, "content")
	if len(u.([]any)) != 1 || len(a.([]any)) != 3 {
		t.Fatalf("messages %s", body)
	}
	if modeltest.At(a, 0, "type") != "thinking" || modeltest.At(a, 0, "signature") != "sig1" || modeltest.At(a, 0, "thinking") != "first" ||
		modeltest.At(a, 1, "type") != "redacted_thinking" || modeltest.At(a, 1, "data") != "EncryptedBlob" || modeltest.At(a, 2, "text") != "answer" {
		t.Errorf("assistant sent as %v", a)
	}
}

// Any events, a line each: no panic, and an answer's blocks only as they
// began in order.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte(`{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":3}}}
{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}
{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}
{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"1}"}}
{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`))
	f.Add([]byte(`{"type":"content_block_delta","index":3,"delta":{"type":"thinking_delta","thinking":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a answer
		for _, line := range bytes.Split(data, []byte("\n")) {
			var e event
			if json.Unmarshal(line, &e) != nil {
				continue
			}
			n := len(a.blocks)
			if err := a.add(&e); err == nil && e.Type == "content_block_start" && len(a.blocks) != n+1 {
				t.Fatalf("a block began at %d with %d before", e.Index, n)
			}
		}
		if len(a.blocks) > maxBlocks {
			t.Fatalf("%d blocks", len(a.blocks))
		}
	})
}
