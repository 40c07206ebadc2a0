package harness

import (
	"github.com/lnk-dev/link/contract"
)

// callMeta is what a call of the turn's tells its tool: the thread, its
// hops, the tools the conversation has this round (link.local/tools) and
// their spec, and the model.
func (t *turn) callMeta() contract.CallMeta {
	narrowed := t.tools.narrowed
	return contract.CallMeta{Thread: t.c.thread, Hops: t.hops(), Tools: narrowed, Model: t.modelName(), Specs: t.specs(narrowed)}
}
