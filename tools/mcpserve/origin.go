package mcpserve

import (
	"fmt"
	"math"

	"github.com/lnk-dev/link/contract"
)

// The keys of what Link Harness sends beside each call's arguments, in
// its _meta, that a tool server reads (harness/mcptools's MetaThread and
// MetaHops).
const (
	MetaThread = "link.local/thread" // the conversation the call is made in
	MetaHops   = "link.local/hops"   // the hops of the message being answered
)

// Origin is where a call was made, as its _meta says: the conversation
// (a thread id, contract.CheckThread's) and the hops of the message being
// answered (0 when not said). A call with no conversation, or one that
// isn't a thread id, or hops that aren't a count, is refused naming the
// rule: what a tool does for a conversation later (a background
// command's end, a reminder) is told there.
func Origin(meta map[string]any) (thread string, hops int, err error) {
	thread, ok := meta[MetaThread].(string)
	if !ok {
		return "", 0, fmt.Errorf("the call's _meta names no conversation (%s): it is made through Link Harness", MetaThread)
	}
	if err := contract.CheckThread(thread); err != nil {
		return "", 0, fmt.Errorf("the call's _meta %s: %w", MetaThread, err)
	}
	switch h := meta[MetaHops].(type) {
	case nil:
	case float64:
		if h < 0 || h != math.Trunc(h) || h > contract.MaxHops {
			return "", 0, fmt.Errorf("the call's _meta %s is a count, 0 to %d", MetaHops, contract.MaxHops)
		}
		hops = int(h)
	default:
		return "", 0, fmt.Errorf("the call's _meta %s is a count, 0 to %d", MetaHops, contract.MaxHops)
	}
	return thread, hops, nil
}
