package hub

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// keptAnswers are the answers of turns whose bridge went before it was
// told them, kept in the hub's memory for _link/recover: a harness behind
// the hub is always told its answers (the hub stays its caller), so only
// the hub knows which nobody took.
type keptAnswers struct {
	mu   sync.Mutex
	next int
	list []contract.RecoveredAnswer
}

// hubIDPrefix starts the ids of the answers the hub keeps, told apart
// from a harness's own in a done list.
const hubIDPrefix = "hub-"

// maxKept bounds the answers kept: past it the oldest goes.
const maxKept = 1024

// keep keeps thread's answer text.
func (k *keptAnswers) keep(thread, text string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.next++
	k.list = append(k.list, contract.RecoveredAnswer{ID: "hub-" + strconv.Itoa(k.next), Thread: thread, Text: text})
	if len(k.list) > maxKept {
		k.list = k.list[len(k.list)-maxKept:]
	}
}

// recover answers _link/recover: each kept answer handed over once; in
// two phases, with its id, again at each ask until done lets it go.
func (k *keptAnswers) recover(p contract.RecoverParams) contract.RecoverResult {
	k.mu.Lock()
	defer k.mu.Unlock()
	res := contract.RecoverResult{Answers: []contract.RecoveredAnswer{}}
	if len(p.Done) > 0 {
		done := make(map[string]bool, len(p.Done))
		for _, id := range p.Done {
			done[id] = true
		}
		left := k.list[:0]
		for _, a := range k.list {
			if !done[a.ID] {
				left = append(left, a)
			}
		}
		k.list = left
		return res
	}
	for _, a := range k.list {
		if !p.TwoPhase {
			a.ID = ""
		}
		res.Answers = append(res.Answers, a)
	}
	if !p.TwoPhase {
		k.list = nil
	}
	return res
}

// recover answers a bridge's _link/recover from the answers kept, and,
// for a harness whose sessions are threads (it keeps answers of turns a
// crash cut short, finished after), from the harness's too: its ids go
// to it, the hub's stay here.
func (b *bridge) recover(ctx context.Context, r *acp.Request) {
	p, err := contract.ParseRecoverParams(r.Params)
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	hb := b.hb
	var own, theirs contract.RecoverParams
	own.TwoPhase, theirs.TwoPhase = p.TwoPhase, p.TwoPhase
	for _, id := range p.Done {
		if strings.HasPrefix(id, hubIDPrefix) {
			own.Done = append(own.Done, id)
		} else {
			theirs.Done = append(theirs.Done, id)
		}
	}
	res := hb.answers.recover(own)
	if len(p.Done) > 0 && len(own.Done) > 0 && len(theirs.Done) == 0 {
		r.Reply(ctx, res)
		return
	}
	hb.mu.Lock()
	h := hb.cur
	hb.mu.Unlock()
	if h != nil && h.agreedThreads() {
		raw, err := h.call(ctx, contract.MethodRecover, theirs)
		var more contract.RecoverResult
		if err == nil && json.Unmarshal(raw, &more) == nil {
			res.Answers = append(res.Answers, more.Answers...)
		} else if err != nil {
			hb.cfg.Logger.Warn("harness recover failed", "err", err)
		}
	}
	if len(p.Done) > 0 {
		res.Answers = []contract.RecoveredAnswer{}
	}
	r.Reply(ctx, res)
}
