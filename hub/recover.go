package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/internal/recovery"
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

	mu     sync.Mutex
	next   int // the number of the last id given
	list   []contract.RecoveredAnswer
	size   int  // the text held
	theirs bool // a two-phase ask goes to the harness first (theirTurn)

	ledger recovery.Ledger // its Store is this
}

// theirTurn says whether this two-phase ask is the harness's turn to be
// asked first, and turns it over.
func (k *pendingAnswers) theirTurn() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.theirs = !k.theirs
	return !k.theirs
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

// maxAnswersFile bounds the answers file read.
const maxAnswersFile = maxPendingText + maxPending*4096

// openAnswers reads the answers kept at path (none when it doesn't
// exist yet); an empty path keeps them in memory alone. A file that
// doesn't read (cut short, not JSON, past its bound, an id the hub
// didn't give) is set aside as path.corrupt-<time>
// (recovery.Asides), said in log, and the hub goes on with none kept,
// its ids numbered on from now's milliseconds so none is one given
// before: a done naming an id handed over before the loss lets none of
// the new go. One that isn't a regular file (a link, a named pipe) is
// refused.
func openAnswers(path string, log *slog.Logger, now time.Time) (*pendingAnswers, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	k := &pendingAnswers{path: path, log: log}
	k.ledger.Store = k
	if path == "" {
		return k, nil
	}
	b, err := fsx.ReadLimit(path, maxAnswersFile)
	if errors.Is(err, fsx.ErrTooBig) {
		return k, k.setAside(err, now)
	}
	if err != nil {
		return nil, fmt.Errorf("read the answers kept: %w", err)
	}
	if b == nil {
		return k, nil
	}
	if err := k.parse(b); err != nil {
		k.list, k.size, k.next = nil, 0, 0
		return k, k.setAside(err, now)
	}
	return k, nil
}

// parse reads the answers file's bytes b into k.
func (k *pendingAnswers) parse(b []byte) error {
	var doc answersDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	if doc.Next < 0 {
		return fmt.Errorf("next is %d, not a count", doc.Next)
	}
	k.next = doc.Next
	ids := make(map[string]bool, len(doc.Answers))
	for _, a := range doc.Answers {
		if a.ID == "" || a.Thread == "" {
			return errors.New("an answer with no id or thread")
		}
		// An id the hub would give again, or twice in the file, would let
		// a done naming one answer let go another never handed over.
		n, err := strconv.Atoi(strings.TrimPrefix(a.ID, hubIDPrefix))
		if !strings.HasPrefix(a.ID, hubIDPrefix) || err != nil || n < 1 || n > k.next || ids[a.ID] {
			return fmt.Errorf("answer id %q is not one the hub gave (%sN, N from 1 to next, %d, each once)", truncate(a.ID, 64), hubIDPrefix, k.next)
		}
		ids[a.ID] = true
		k.list = append(k.list, a)
		k.size += len(a.Text)
	}
	return nil
}

// setAside sets the answers file that didn't read (why) aside and writes
// it anew, none kept, numbering on from now's milliseconds.
func (k *pendingAnswers) setAside(why error, now time.Time) error {
	asides := recovery.Asides{Logger: k.log}
	if _, err := asides.SetAside(context.Background(), k.path, why, now); err != nil {
		return fmt.Errorf("read the answers kept %s: %v; it could not be set aside: %w", k.path, why, err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.next = max(k.next, int(now.UnixMilli()))
	k.write()
	return nil
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

// Kept lists the answers kept, oldest first: recovery's Store.
func (k *pendingAnswers) Kept(context.Context) ([]recovery.Answer, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]recovery.Answer, len(k.list))
	for i, a := range k.list {
		out[i] = recovery.Answer{ID: a.ID, Thread: a.Thread, Text: a.Text}
	}
	return out, nil
}

// Remove is a done: it deletes the answers with ids from the hub's
// answers.json, written before it returns, and returns those it
// deleted (recovery's Store).
func (k *pendingAnswers) Remove(_ context.Context, ids []string) ([]recovery.Answer, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	done := make(map[string]bool, len(ids))
	for _, id := range ids {
		done[id] = true
	}
	var gone []recovery.Answer
	left := k.list[:0]
	for _, a := range k.list {
		if done[a.ID] {
			gone = append(gone, recovery.Answer{ID: a.ID, Thread: a.Thread, Text: a.Text})
			k.size -= len(a.Text)
		} else {
			left = append(left, a)
		}
	}
	clear(k.list[len(left):])
	k.list = left
	if len(gone) > 0 {
		k.write()
	}
	return gone, nil
}

// recover answers _link/recover from the answers kept (recovery's rules):
// a page of them, each handed over once; in two phases, with its id,
// again at later asks until a done lets it go.
func (k *pendingAnswers) recover(ctx context.Context, p contract.RecoverParams) contract.RecoverResult {
	res, _ := k.ledger.Recover(ctx, p, nil) // the hub's Store never fails
	return res
}

// recover answers a bridge's _link/recover from the answers kept, and,
// for a harness whose sessions are threads (it keeps answers of turns a
// crash cut short, finished after), from the harness's too: its ids go
// to it, the hub's stay here. Each answer is a page of one side's,
// never both, so it is what that side bounded to a frame: the hub's own
// first, the harness's once the hub has none to hand over; two-phase,
// where answers left kept would stay first for good, the two take turns.
func (b *bridge) recover(ctx context.Context, r *acp.Request) {
	p, err := contract.ParseRecoverParams(r.Params)
	if err == nil {
		err = contract.CheckRecoverID(r.ID)
	}
	if err != nil {
		r.Fail(ctx, err)
		return
	}
	hb := b.hb
	hb.mu.Lock()
	h := hb.cur
	hb.mu.Unlock()
	if h != nil && !h.agreedThreads() {
		h = nil
	}
	none := contract.RecoverResult{Answers: []contract.RecoveredAnswer{}}
	if p.Done != nil {
		var own, theirs []string
		for _, id := range p.Done {
			if strings.HasPrefix(id, hubIDPrefix) {
				own = append(own, id)
			} else {
				theirs = append(theirs, id)
			}
		}
		if len(own) > 0 {
			hb.answers.recover(ctx, contract.RecoverParams{Done: own})
		}
		if len(theirs) > 0 && h != nil {
			if _, err := h.call(ctx, contract.MethodRecover, contract.RecoverParams{Done: theirs}); err != nil {
				hb.cfg.Logger.Warn("harness recover failed", "err", err)
			}
		}
		r.Reply(ctx, none)
		return
	}
	theirsFirst := p.TwoPhase && hb.answers.theirTurn()
	if h != nil && theirsFirst {
		if raw, ok := b.recoverTheirs(ctx, h, p); ok {
			r.Reply(ctx, raw)
			return
		}
	}
	res := hb.answers.recover(ctx, p)
	if len(res.Answers) > 0 || h == nil || theirsFirst {
		if h != nil && res.Meta == nil && len(res.Answers) > 0 {
			res.Meta = &contract.RecoverMeta{Link: contract.RecoverLink{More: true}} // the harness's may wait
		}
		r.Reply(ctx, res)
		return
	}
	if raw, ok := b.recoverTheirs(ctx, h, p); ok {
		r.Reply(ctx, raw)
		return
	}
	r.Reply(ctx, res)
}

// recoverTheirs asks the harness h's _link/recover with p and returns
// its result as it came, to go out byte for byte (its page bounded for
// a frame); ok is false when it failed or handed over none.
func (b *bridge) recoverTheirs(ctx context.Context, h *harness, p contract.RecoverParams) (json.RawMessage, bool) {
	raw, err := h.call(ctx, contract.MethodRecover, p)
	var res contract.RecoverResult
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	if err == nil && len(raw) > contract.MaxRecoverResult {
		err = fmt.Errorf("its result is %d bytes, over the %d a frame leaves it", len(raw), contract.MaxRecoverResult)
	}
	if err != nil {
		b.hb.cfg.Logger.Warn("harness recover failed", "err", err)
		return nil, false
	}
	return raw, len(res.Answers) > 0
}
