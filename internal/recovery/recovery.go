// Package recovery holds the rules of _link/recover, once, for Link
// Harness (store/delivery: a file per conversation) and for the hub
// (hub/answers.json: one file): a Ledger answers a request over a Store
// that keeps the answers. Single phase, it hands over each answer once
// and forgets it, leaving those kept for lnk agent chat; two-phase, it
// hands over each with its id, again at each ask, until a done lets it
// go; a done passes over an id that names none.
//
// An answer may be 16 MiB and a bridge reads at most contract.MaxFrame of
// a message, so every result is a page: as many answers as fit, measured
// as they are encoded (contract.MaxRecoverResult), the rest at the next
// ask, and a result that leaves some out says so in its
// _meta.link.more. A single phase forgets only the answers of its page.
// A two-phase page starts with the answers this ledger hasn't handed
// over yet in its round, so asks that send no done (lnk agent chat's,
// or a bridge's for a link: thread, which it leaves kept) still reach
// every answer. One answer too long for a result alone is cut to fit,
// with CutNote.
//
// It imports only contract and internal packages, so the hub uses it
// without Link Harness or the store's conversations.
package recovery

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/jsonx"
)

// CutNote ends an answer cut at what a bridge reads of one, saying why.
const CutNote = "\n\n[The answer was cut here: it passed 16 MiB, the most a chat's bridge reads of one.]"

// Answer is one answer kept for _link/recover.
type Answer struct {
	ID     string // unique in its store, given by it
	Thread string
	Text   string
	// ForChat marks an answer kept for lnk agent chat, which asks for its
	// thread's own: a single phase leaves it.
	ForChat bool
}

// Store keeps a Ledger's answers.
type Store interface {
	// Kept lists the answers kept, oldest first. An error with answers
	// is of a part that failed, the rest listed.
	Kept(ctx context.Context) ([]Answer, error)
	// Remove lets the answers with ids go and returns those it let go;
	// an id that names none kept is passed over.
	Remove(ctx context.Context, ids []string) ([]Answer, error)
}

// Ledger answers _link/recover over a Store.
type Ledger struct {
	Store Store
	// Max bounds a result, encoded; 0 is contract.MaxRecoverResult.
	Max int

	mu    sync.Mutex
	shown map[string]bool // ids handed over in the two-phase round
}

// Recover answers p, the answers pass names left out (an answer still on
// its way to a caller). A done lets its ids go and answers none. An
// error is returned only when no answer was let go for the result: one
// after a single phase forgot some would lose them.
func (l *Ledger) Recover(ctx context.Context, p contract.RecoverParams, pass func(id string) bool) (contract.RecoverResult, error) {
	res := contract.RecoverResult{Answers: []contract.RecoveredAnswer{}}
	if p.Done != nil {
		_, err := l.Store.Remove(ctx, p.Done)
		return res, err
	}
	kept, err := l.Store.Kept(ctx)
	if err != nil && len(kept) == 0 {
		return res, err
	}
	var all []Answer
	for _, k := range kept {
		if (pass == nil || !pass(k.ID)) && (p.TwoPhase || !k.ForChat) {
			all = append(all, k)
		}
	}
	if p.TwoPhase {
		return l.twoPhase(all), nil
	}
	page := l.fit(all, false)
	if len(page) == 0 {
		return res, nil
	}
	ids := make([]string, len(page))
	for i, a := range page {
		ids[i] = a.ID
	}
	gone, rerr := l.Store.Remove(ctx, ids)
	taken := make(map[string]bool, len(gone))
	for _, k := range gone {
		taken[k.ID] = true
	}
	for _, a := range page {
		if taken[a.ID] {
			a.ID = ""
			res.Answers = append(res.Answers, a)
		}
	}
	if len(res.Answers) == 0 && rerr != nil {
		return res, rerr
	}
	if len(res.Answers) < len(all) {
		res.Meta = moreMeta()
	}
	return res, nil
}

// twoPhase is a two-phase page of all: as many as fit, those not handed
// over yet in the round first, then those that were, each part in its
// order; the page itself in all's order. Once every one has been, a new
// round starts.
func (l *Ledger) twoPhase(all []Answer) contract.RecoverResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	var fresh, seen []int
	for i, k := range all {
		if l.shown[k.ID] {
			seen = append(seen, i)
		} else {
			fresh = append(fresh, i)
		}
	}
	if len(fresh) == 0 {
		l.shown, fresh, seen = nil, seen, nil // a new round
	}
	order := append(fresh, seen...)
	ordered := make([]Answer, len(order))
	for j, i := range order {
		ordered[j] = all[i]
	}
	page := l.fit(ordered, true)
	// Back in all's order, and the round noted: only ids still kept.
	place := make(map[string]int, len(all))
	for i, k := range all {
		place[k.ID] = i
	}
	slices.SortFunc(page, func(x, y contract.RecoveredAnswer) int { return place[x.ID] - place[y.ID] })
	keep := make(map[string]bool, len(all))
	for _, k := range all {
		if l.shown[k.ID] {
			keep[k.ID] = true
		}
	}
	for _, a := range page {
		keep[a.ID] = true
	}
	l.shown = keep
	res := contract.RecoverResult{Answers: page}
	if len(page) < len(all) {
		res.Meta = moreMeta()
	}
	return res
}

func moreMeta() *contract.RecoverMeta {
	return &contract.RecoverMeta{Link: contract.RecoverLink{More: true}}
}

// pageRoom is what a result's answers may take: the bound less the rest
// of the result, `{"answers":[` ... `],"_meta":{"link":{"more":true}}}`.
var pageRoom = func() int {
	b, _ := json.Marshal(contract.RecoverResult{Answers: []contract.RecoveredAnswer{}, Meta: moreMeta()})
	return len(b)
}()

// fit is the first answers of all whose result fits the bound, in their
// order, measured with their ids when withID (each has its id, to be
// cleared when sent without): at least the first, cut to fit alone when
// it doesn't.
func (l *Ledger) fit(all []Answer, withID bool) []contract.RecoveredAnswer {
	room := l.Max
	if room <= 0 {
		room = contract.MaxRecoverResult
	}
	room -= pageRoom
	page := []contract.RecoveredAnswer{}
	used := 0
	for _, k := range all {
		a := contract.RecoveredAnswer{Thread: k.Thread, Text: k.Text}
		if withID {
			a.ID = k.ID
		}
		n := encodedLen(a)
		if len(page) > 0 {
			n++ // the comma before it
		}
		if used+n > room {
			if len(page) > 0 {
				break
			}
			a.Text = cutToFit(a, room)
			n = encodedLen(a)
		}
		a.ID = k.ID
		page = append(page, a)
		used += n
	}
	return page
}

// encodedLen is how long a is as JSON, as encoding/json writes it (the
// result is sent so): a without its text, marshalled, and the text's
// quoted length (jsonx.StringLen, fuzzed against encoding/json), not
// copying a long text to count it.
func encodedLen(a contract.RecoveredAnswer) int {
	text := a.Text
	a.Text = ""
	b, err := json.Marshal(a)
	if err != nil {
		return int(^uint(0) >> 1)
	}
	return len(b) - 2 + jsonx.StringLen(text)
}

// cutToFit is a's text cut, at a character's start, with CutNote after,
// so that a encodes in at most room bytes: the longest such start.
func cutToFit(a contract.RecoveredAnswer, room int) string {
	text := a.Text
	a.Text = ""
	// The rest, with "" for its text, and the note's quoted length less
	// its quotes, leave the room of the start unquoted.
	room -= encodedLen(a) + jsonx.StringLen(CutNote) - 2
	return fitPrefix(text, room) + CutNote
}

// fitPrefix is the longest start of s, at a character's start, that
// takes at most room bytes quoted (jsonx.StringLen, its quotes not
// counted): measured a block at a time, then the last block halved.
func fitPrefix(s string, room int) string {
	const block = 64 << 10
	used, at := 0, 0
	for at < len(s) {
		end := len(cutRunes(s, at+block))
		if end <= at {
			end = min(len(s), at+block)
		}
		n := jsonx.StringLen(s[at:end]) - 2
		if used+n > room {
			break
		}
		used, at = used+n, end
	}
	lo, hi := at, min(len(s), at+block)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if used+jsonx.StringLen(cutRunes(s[at:], mid-at))-2 <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return cutRunes(s, lo)
}

// cutRunes is s's first n bytes, less the start of a character n cuts.
func cutRunes(s string, n int) string {
	n = min(n, len(s))
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
