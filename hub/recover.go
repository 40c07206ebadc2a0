package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
)

// pendingAnswers is the hub's list of answers whose bridge went before it
// was sent them, kept for _link/recover: a harness behind the hub is always
// told its answers (the hub stays its caller), so only the hub knows
// which nobody took. With a path they are kept in a file too, written
// whole at each change (a temporary file, synced, renamed over it, its
// folder synced), so a kill of the hub at any moment loses none it
// kept, nor hands over again one it let go.
type pendingAnswers struct {
	path string
	log  *slog.Logger

	mu   sync.Mutex
	next int // the number of the last id given
	list []contract.RecoveredAnswer
	size int // the text held
}

// answersDoc is the answers file's content.
type answersDoc struct {
	Next    int                        `json:"next"`
	Answers []contract.RecoveredAnswer `json:"answers"`
}

// hubIDPrefix starts the ids of the answers the hub keeps, told apart
// from a harness's own in a done list.
const hubIDPrefix = "hub-"

// maxPending and maxPendingText bound the pending answers: past either,
// the oldest go.
const (
	maxPending     = 1024
	maxPendingText = 64 << 20
)

// openAnswers reads the answers kept at path (none when it doesn't
// exist yet); an empty path keeps them in memory alone.
func openAnswers(path string, log *slog.Logger) (*pendingAnswers, error) {
	k := &pendingAnswers{path: path, log: log}
	if path == "" {
		return k, nil
	}
	b, err := fsx.ReadLimit(path, maxPendingText+maxPending*4096)
	if err != nil {
		return nil, fmt.Errorf("read the answers kept: %w", err)
	}
	if b == nil {
		return k, nil
	}
	var doc answersDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("read the answers kept %s: %w", path, err)
	}
	if doc.Next < 0 {
		return nil, fmt.Errorf("read the answers kept %s: next is %d, not a count", path, doc.Next)
	}
	k.next = doc.Next
	ids := make(map[string]bool, len(doc.Answers))
	for _, a := range doc.Answers {
		if a.ID == "" || a.Thread == "" {
			return nil, fmt.Errorf("read the answers kept %s: an answer with no id or thread", path)
		}
		// An id the hub would give again, or twice in the file, would let
		// a done naming one answer let go another never handed over.
		n, err := strconv.Atoi(strings.TrimPrefix(a.ID, hubIDPrefix))
		if !strings.HasPrefix(a.ID, hubIDPrefix) || err != nil || n < 1 || n > k.next || ids[a.ID] {
			return nil, fmt.Errorf("read the answers kept %s: answer id %q is not one the hub gave (%sN, N from 1 to next, %d, each once)", path, a.ID, hubIDPrefix, k.next)
		}
		ids[a.ID] = true
		k.list = append(k.list, a)
		k.size += len(a.Text)
	}
	return k, nil
}

// keep keeps thread's answer text, in the file before it returns.
func (k *pendingAnswers) keep(thread, text string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.next++
	k.list = append(k.list, contract.RecoveredAnswer{ID: hubIDPrefix + strconv.Itoa(k.next), Thread: thread, Text: text})
	k.size += len(text)
	for len(k.list) > maxPending || (k.size > maxPendingText && len(k.list) > 1) {
		k.size -= len(k.list[0].Text)
		k.list = k.list[1:]
	}
	k.write()
}

// write replaces the file with the answers held; k.mu is held. One that
// fails is logged: the answers stay in memory, and the next change
// writes them all.
func (k *pendingAnswers) write() {
	if k.path == "" {
		return
	}
	list := k.list
	if list == nil {
		list = []contract.RecoveredAnswer{}
	}
	b, err := json.Marshal(answersDoc{Next: k.next, Answers: list})
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(k.path), 0o700); err == nil {
			err = fsx.Replace(k.path, append(b, '\n'), true)
		}
	}
	if err != nil {
		k.log.Warn("keep the answers for recover", "path", k.path, "err", err)
	}
}

// recover answers _link/recover: each kept answer handed over once; in
// two phases, with its id, again at each ask until done lets it go.
func (k *pendingAnswers) recover(p contract.RecoverParams) contract.RecoverResult {
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
		if len(left) != len(k.list) {
			k.list = left
			k.size = 0
			for _, a := range left {
				k.size += len(a.Text)
			}
			k.write()
		}
		return res
	}
	for _, a := range k.list {
		if !p.TwoPhase {
			a.ID = ""
		}
		res.Answers = append(res.Answers, a)
	}
	if !p.TwoPhase && len(k.list) > 0 {
		k.list, k.size = nil, 0
		k.write()
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
	res := contract.RecoverResult{Answers: []contract.RecoveredAnswer{}}
	if len(p.Done) == 0 || len(own.Done) > 0 {
		// A done naming none of the hub's lets none of them go: asked
		// with no done, its own would be handed over, and forgotten.
		res = hb.answers.recover(own)
	}
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
