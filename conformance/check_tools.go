package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// checkNarrowing sends a thread's messages with and without tools lists
// and reads, through the recording model, what each turn offered the model:
// [a] gives {a}; then [a b] still {a} (never widens); none keeps {a}; [b]
// gives {} (the tools in both); none keeps {}. A thread never narrowed is
// offered both, so the hook shows what it is asked.
func checkNarrowing(ctx context.Context, k *kit) error {
	a, b := k.t.Tools[0], k.t.Tools[1]
	fresh := k.thread("tools-narrow", 0)
	calls, err := k.offered(ctx, fresh, nil)
	if err != nil {
		return err
	}
	for _, c := range calls {
		if !slices.Contains(c.Tools, a) || !slices.Contains(c.Tools, b) {
			return fmt.Errorf("a conversation never narrowed was offered %v, not %s and %s", c.Tools, a, b)
		}
	}
	thread := k.thread("tools-narrow", 1)
	for i, step := range []struct {
		what string
		list []string // nil: the message has no tools
		want []string
	}{
		{"a first list narrows", []string{a}, []string{a}},
		{"a later list never widens", []string{a, b}, []string{a}},
		{"a message without one keeps it", nil, []string{a}},
		{"a later list narrows to the tools in both", []string{b}, []string{}},
		{"a message without one keeps none", nil, []string{}},
	} {
		var link any
		if step.list != nil {
			link = map[string]any{"tools": step.list}
		}
		calls, err := k.offered(ctx, thread, linkMeta(link))
		if err != nil {
			return fmt.Errorf("message %d (%s): %w", i+1, step.what, err)
		}
		for _, c := range calls {
			if !sameSet(c.Tools, step.want) {
				return fmt.Errorf("message %d (%s, tools %v): the model was offered %v, not %v", i+1, step.what, step.list, c.Tools, step.want)
			}
		}
	}
	return nil
}

// offered sends one message on thread and says the model calls its turn
// made, as the recording model saw them: at least one.
func (k *kit) offered(ctx context.Context, thread string, meta json.RawMessage) ([]ModelCall, error) {
	before, err := k.t.Model.Seen(ctx, thread)
	if err != nil {
		return nil, skip("the recording model said nothing: %v", err)
	}
	e, err := k.message(ctx, thread, plainPrompt, meta)
	if err != nil {
		return nil, err
	}
	if err := e.answered(); err != nil {
		return nil, err
	}
	after, err := k.t.Model.Seen(ctx, thread)
	if err != nil {
		return nil, skip("the recording model said nothing: %v", err)
	}
	if len(after) <= len(before) {
		return nil, fmt.Errorf("the recording model saw no call of the turn on %s: the hook records nothing, so it proves nothing", thread)
	}
	return after[len(before):], nil
}

func sameSet(got, want []string) bool {
	for _, g := range got {
		if !slices.Contains(want, g) {
			return false
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}
