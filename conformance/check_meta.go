package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// metaCase is one way a _meta.link breaks a rule: the refused value, and
// beside it the same field said right, which the endpoint must answer, so
// that an endpoint refusing every _meta.link passes none of these.
type metaCase struct {
	name string
	rule string
	bad  any // _meta.link's value
	good func(Target) any
}

// suffix is what a case's rule says of every case: refused before the
// model sees it, with a JSON-RPC error and no chunk.
func suffix(rule string) string {
	if strings.Contains(rule, "refused before the model sees it") {
		return ", with a JSON-RPC error and no answer chunk"
	}
	return "; refused before the model sees it, with a JSON-RPC error and no answer chunk"
}

// metaCases are the table of invalid _meta.link values.
var metaCases = []metaCase{
	{
		name: "meta-from",
		rule: "Link refuses a from naming no such sender before it's sent",
		bad:  map[string]any{"from": "nobody:42"},
		good: fixed(map[string]any{"from": "person:telegram:42"}),
	},
	{
		name: "meta-fromname-long",
		rule: "fromName: plain UTF-8, at most 64 characters",
		bad:  map[string]any{"from": "person:telegram:42", "fromName": strings.Repeat("a", 65)},
		good: fixed(map[string]any{"from": "person:telegram:42", "fromName": strings.Repeat("é", 64)}),
	},
	{
		name: "meta-fromname-control",
		rule: "fromName: ... no control character",
		bad:  map[string]any{"from": "person:telegram:42", "fromName": "Ann\u0007 Bell"},
		good: fixed(map[string]any{"from": "person:telegram:42", "fromName": "Ann Bell"}),
	},
	{
		name: "meta-hops-negative",
		rule: "hops is how many messages, each sent by an agent on its own, led to it",
		bad:  map[string]any{"from": "agent:helper", "hops": -1},
		good: fixed(map[string]any{"from": "agent:helper", "hops": 2}),
	},
	{
		name: "meta-tools-not-list",
		rule: "One that isn't a list of names is refused before the model sees it",
		bad:  map[string]any{"tools": "memory__search"},
		good: fixed(map[string]any{"tools": []string{"memory__search"}}),
	},
	{
		name: "meta-tool-name-long",
		rule: "The names the harness offers them by (memory__search), ... each 1 to 128 letters, digits, _, - and .",
		bad:  map[string]any{"tools": []string{strings.Repeat("t", 129)}},
		good: fixed(map[string]any{"tools": []string{strings.Repeat("t", 128)}}),
	},
	{
		name: "meta-tools-257",
		rule: "The names the harness offers them by (memory__search), at most 256",
		bad:  map[string]any{"tools": toolNames(257)},
		good: fixed(map[string]any{"tools": toolNames(256)}),
	},
	{
		name: "meta-model",
		rule: "It's 1 to 128 letters, digits and -._:/@, else refused",
		bad:  map[string]any{"model": "bad model!"},
		good: func(t Target) any {
			if t.ModelName == "" {
				return nil
			}
			return map[string]any{"model": t.ModelName}
		},
	},
	{
		name: "meta-link-not-object",
		rule: "One that isn't Link's, or names what Link refuses, is refused before the model sees it",
		bad:  "person:telegram:42",
		good: fixed(map[string]any{}),
	},
}

func fixed(v any) func(Target) any { return func(Target) any { return v } }

func toolNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("t%d", i)
	}
	return out
}

// metaChecks are the table's checks.
func metaChecks() []check {
	out := make([]check, len(metaCases))
	for i, c := range metaCases {
		out[i] = check{
			name: c.name,
			rule: c.rule + suffix(c.rule),
			run:  func(ctx context.Context, k *kit) error { return checkMeta(ctx, k, c) },
		}
	}
	return out
}

// linkMeta is a _meta holding link; nil link is no _meta.
func linkMeta(link any) json.RawMessage {
	if link == nil {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"link": link})
	return b
}

// checkMeta sends the refused message, then on the same thread the same
// field said right, and checks: the first is a JSON-RPC invalid params
// error with no chunk, the second answered, and the recording model saw
// the second's words and nothing of the first's.
func checkMeta(ctx context.Context, k *kit, c metaCase) error {
	thread := k.thread(c.name, 0)
	refused := fmt.Sprintf("conformance-refused-%s-%s", k.run, c.name)
	accepted := fmt.Sprintf("conformance-accepted-%s-%s", k.run, c.name)
	e, err := k.message(ctx, thread, "conformance: "+refused, linkMeta(c.bad))
	if err != nil {
		return err
	}
	if e.response.Error == nil {
		return fmt.Errorf("answered (%s), not refused; came: %s", truncate(string(e.response.Result), 80), describe(e.updates))
	}
	if e.response.Error.Code != codeInvalidParams {
		return fmt.Errorf("refused with code %d (%q), not %d (invalid params)", e.response.Error.Code, truncate(e.response.Error.Message, 80), codeInvalidParams)
	}
	if n := len(e.chunks()); n > 0 {
		return fmt.Errorf("refused, after %d answer chunks", n)
	}
	ok, err := k.message(ctx, thread, "conformance: "+accepted, linkMeta(c.good(k.t)))
	if err != nil {
		return fmt.Errorf("the same message with %s said right: %w", c.name, err)
	}
	if err := ok.answered(); err != nil {
		return fmt.Errorf("the same message with _meta.link said right: %w", err)
	}
	if k.t.Model == nil {
		return skip("refused on the wire (invalid params, no chunk); that no model saw it needs the recording model (Model)")
	}
	calls, err := k.t.Model.Seen(ctx, thread)
	if err != nil {
		return skip("the recording model said nothing: %v", err)
	}
	saw := false
	for _, call := range calls {
		if strings.Contains(call.Text, refused) {
			return fmt.Errorf("the model saw the refused message %q", refused)
		}
		saw = saw || strings.Contains(call.Text, accepted)
	}
	if !saw {
		return errors.New("the recording model saw nothing of the message it answered: the hook records nothing, so it proves nothing")
	}
	return nil
}
