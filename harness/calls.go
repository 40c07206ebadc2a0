package harness

import (
	"context"
	"slices"
	"sync"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// callMeta is what a call of the turn's tells its tool: the thread, its
// hops, the tools the conversation has this round (link.local/tools) and
// their spec, and the model.
func (t *turn) callMeta() contract.CallMeta {
	narrowed := t.tools.narrowed
	return contract.CallMeta{Thread: t.c.thread, Hops: t.hops(), Tools: narrowed, Model: t.modelName(), Specs: t.specs(narrowed)}
}

// call makes a round's calls, all at once. Each is streamed as a
// tool_call titled with the tool's name, then its tool_call_update; each
// answer, kept up to 32 KiB, is an event of its own, written as it comes.
// A call to a tool the round didn't offer is answered as one there
// isn't, and never made.
func (t *turn) call(ctx context.Context, calls []store.ToolCall) error {
	names := make([]string, len(t.tools.tools))
	for i, o := range t.tools.tools {
		names[i] = o.Name
	}
	meta := t.callMeta()
	t.out.setActivity(t.verbose()) // the conversation's /chat:verbose, as of now
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.out.toolCall(c.ID, c.Name)
			var text string
			var failed bool
			if slices.Contains(names, c.Name) {
				text, failed = t.with.tools.Call(ctx, t.c.agent, model.ToolCall{ID: c.ID, Name: c.Name, Input: c.Input}, meta)
			} else {
				text, failed = noSuchTool(c.Name), true
			}
			_, errs[i] = t.with.store.append(ctx, t.c, store.Event{Kind: store.KindToolResult, CallID: c.ID, Tool: c.Name, Text: capToolAnswer(text), IsError: failed})
			t.out.toolDone(c.ID, failed)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
