package delivery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/internal/recovery"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/router"
)

// Answer is one answer on its way: the text a turn answered, the
// conversation it answers in, and the event it is stored as. Its JSON is
// what answers.json and a sending file hold.
type Answer struct {
	ID     string    `json:"id"`     // its folder's name, "~", a random part
	Thread string    `json:"thread"` // the conversation it answers in
	Text   string    `json:"text"`
	At     time.Time `json:"at"`            // when it was kept pending, or held
	Seq    int64     `json:"seq,omitempty"` // its event's number, when it has one
	// EventTime is the time its event carries: set on a sending answer,
	// with Seq, just before the event is stored, so a recover can tell
	// whether it was (Settle).
	EventTime time.Time `json:"eventTime,omitzero"`
	// ForChat marks an answer kept for lnk agent chat, which asks for its
	// thread's own: a single-phase recover leaves it.
	ForChat bool `json:"forChat,omitempty"`
}

// idSep parts an answer's id: its folder, then a random part. No folder
// name holds it (contract.ThreadFolder).
const idSep = "~"

// maxFile bounds what a read of answers.json or a sending file takes, so
// a file grown wrong can't make it hold an unbounded amount.
const maxFile = 64 << 20

// Answers is one agent's answers on their way: pending in its
// conversations' folders, sending in chats/sending, and the ones this
// process is sending now. Every write of answers.json replaces it whole,
// synced, under the folder's lock, so a reader never sees half of one and
// a crash leaves the old or the new.
type Answers struct {
	Paths store.Paths
	// Now is the clock answers are kept by; nil is time.Now.
	Now func() time.Time
	// Logger takes what costs one conversation and not the call: a file
	// set aside, a folder that failed. Nil discards it.
	Logger *slog.Logger

	mu      sync.Mutex // orders this process's writers; the folder's lock, processes
	sending sync.Map   // id → when its turn returned, zero while it runs
	spares  spares     // sending files let go, for the next holds (spare.go)
	named   sync.Map   // what's already named in the log
	read    func()     // called once a listing has read the answers sending (tests)

	once       sync.Once       // sets what follows (init)
	ledger     recovery.Ledger // its Store is folders
	asides     recovery.Asides
	sendingDir string // chats/sending's path, made once: a turn's hold names its files twice
}

// init readies a's ledger, asides and paths, once.
func (a *Answers) init() {
	a.once.Do(func() {
		a.ledger.Store = folders{a}
		a.asides.Logger = a.logger()
		a.sendingDir = filepath.Join(a.Paths.Chats(), SendingDir)
	})
}

func (a *Answers) now() time.Time {
	if a.Now == nil {
		return time.Now()
	}
	return a.Now()
}

func (a *Answers) logger() *slog.Logger {
	if a.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Logger
}

// NewID is a new id of an answer of thread.
func NewID(thread string) (string, error) {
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return "", err
	}
	return name + idSep + randomHex(12), nil
}

// Keep adds an answer nobody took to thread's answers.json, pending for
// _link/recover, and returns the id it is handed over by. at is when it
// was kept (the zero time means now) and seq the number of its event (0
// when it has none). The file is synced before Keep returns.
func (a *Answers) Keep(ctx context.Context, thread, text string, at time.Time, seq int64) (string, error) {
	return a.keep(ctx, thread, text, at, seq, false)
}

// KeepForChat adds an answer to thread's answers.json as Keep does,
// marked for lnk agent chat, which asks for its thread's own by a
// two-phase recover: a single-phase recover leaves it, since the bridge that asks one sends what it takes to a
// chat, and a link:<name> thread's answers go to no chat. A two-phase
// recover hands it over like any other, and a done lets it go.
func (a *Answers) KeepForChat(ctx context.Context, thread, text string, at time.Time, seq int64) (string, error) {
	return a.keep(ctx, thread, text, at, seq, true)
}

func (a *Answers) keep(ctx context.Context, thread, text string, at time.Time, seq int64, forChat bool) (string, error) {
	if at.IsZero() {
		at = a.now()
	}
	id, err := NewID(thread)
	if err != nil {
		return "", err
	}
	k := Answer{ID: id, Thread: thread, Text: text, At: at.UTC(), Seq: seq, ForChat: forChat}
	err = a.update(ctx, thread, func(all []Answer) ([]Answer, bool) { return append(all, k), true })
	if err != nil {
		return "", fmt.Errorf("keep an answer of %s: %w", thread, err)
	}
	return id, nil
}

// Pending lists every answer still to hand over, of every conversation
// of the agent, oldest first, the sending ones with them. A folder whose
// answers don't read is named in the log and passed over.
func (a *Answers) Pending(ctx context.Context) ([]Answer, error) {
	out, err := a.holds(nil)
	if err != nil {
		return nil, fmt.Errorf("list answers to hand over: %w", err)
	}
	more, err := a.pending(ctx)
	if err != nil {
		return nil, fmt.Errorf("list answers to hand over: %w", err)
	}
	out = append(out, more...)
	sortAnswers(out)
	return out, nil
}

// pending lists the answers of every answers.json, unsorted.
func (a *Answers) pending(ctx context.Context) ([]Answer, error) {
	var out []Answer
	err := a.eachFolder(ctx, func(thread, dir string) error {
		all, err := readAnswers(dir, thread)
		if errors.Is(err, store.ErrCorrupt) {
			// Set it aside under the lock, where no writer is mid-way.
			err = a.update(ctx, thread, func(all []Answer) ([]Answer, bool) { return all, false })
			all = nil
		}
		out = append(out, all...)
		return err
	})
	return out, err
}

// done lets the answers with ids go, and returns those it let go from
// answers.json. An id that names none is passed over, and so is one of
// a conversation whose answers.json isn't a regular file (a link, a
// named pipe): it holds no answer of this agent's. Each is let go on its
// own, so one that fails keeps no other.
func (a *Answers) done(ctx context.Context, ids []string) ([]Answer, error) {
	byThread := map[string]map[string]bool{}
	var errs []error
	for _, id := range ids {
		if err := a.release(id); err != nil {
			errs = append(errs, err)
		}
		name, _, ok := strings.Cut(id, idSep)
		if !ok {
			continue
		}
		thread, err := contract.FolderThread(name)
		if err != nil {
			continue
		}
		if byThread[thread] == nil {
			byThread[thread] = map[string]bool{}
		}
		byThread[thread][id] = true
	}
	threads := make([]string, 0, len(byThread))
	for th := range byThread {
		threads = append(threads, th)
	}
	sort.Strings(threads)
	var out []Answer
	for _, thread := range threads {
		ids := byThread[thread]
		gone, err := a.remove(ctx, thread, func(k Answer) bool { return ids[k.ID] })
		out = append(out, gone...)
		if err != nil && !errors.Is(err, fsx.ErrSymlink) && !errors.Is(err, fsx.ErrNotRegular) {
			errs = append(errs, fmt.Errorf("let answers of %s go: %w", thread, err))
		}
	}
	return out, errors.Join(errs...)
}

// Recover answers _link/recover by recovery.Ledger's rules over the
// agent's answers.json files: a done lets its ids go (done); else a page
// of the answers pending, oldest first, the answers still sending that
// pass names (Settle) or this process sends now passed over. Single
// phase it hands over the page's answers but those for chat and forgets
// them, so each is handed over once at most: one lost on its way is
// lost. Two-phase it hands over each with its id and keeps it, handing
// it over again at later asks until a done lets it go, so each is
// handed over at least once. First it adopts each sending answer whose
// turn is gone. A folder that fails costs its own answers only, named in
// the log and asked again at the next recover; the error is for the
// agent's folder as a whole.
func (a *Answers) Recover(ctx context.Context, p contract.RecoverParams, pass map[string]bool) (contract.RecoverResult, error) {
	a.init()
	if p.Done != nil {
		return a.ledger.Recover(ctx, p, nil)
	}
	skip := func(id string) bool { return pass[id] || a.isSending(id) }
	if err := a.adopt(ctx, skip); err != nil {
		return contract.RecoverResult{Answers: []contract.RecoveredAnswer{}}, fmt.Errorf("hand over answers: %w", err)
	}
	res, err := a.ledger.Recover(ctx, p, skip)
	if err != nil {
		return res, fmt.Errorf("hand over answers: %w", err)
	}
	return res, nil
}

// folders is recovery's Store over the agent's answers.json files.
type folders struct{ a *Answers }

// Kept lists every answer pending, oldest first.
func (f folders) Kept(ctx context.Context) ([]recovery.Answer, error) {
	all, err := f.a.pending(ctx)
	sortAnswers(all)
	out := make([]recovery.Answer, len(all))
	for i, k := range all {
		out[i] = recovery.Answer{ID: k.ID, Thread: k.Thread, Text: k.Text, ForChat: k.ForChat}
	}
	return out, err
}

// Remove is a done: it deletes the answers with ids, pending in their
// answers.json or held in chats/sending, and returns those it deleted
// from answers.json.
func (f folders) Remove(ctx context.Context, ids []string) ([]recovery.Answer, error) {
	gone, err := f.a.done(ctx, ids)
	out := make([]recovery.Answer, len(gone))
	for i, k := range gone {
		out[i] = recovery.Answer{ID: k.ID, Thread: k.Thread, Text: k.Text, ForChat: k.ForChat}
	}
	return out, err
}

// remove forgets the answers of thread that pick says, keeping the rest
// in their order, and returns those it forgot.
func (a *Answers) remove(ctx context.Context, thread string, pick func(Answer) bool) ([]Answer, error) {
	return a.removeAt(ctx, thread, func(all []Answer) map[int]bool {
		chosen := map[int]bool{}
		for i, k := range all {
			if pick(k) {
				chosen[i] = true
			}
		}
		return chosen
	})
}

// removeAt forgets the answers of thread that pick chooses, by their
// place, and returns those it forgot.
func (a *Answers) removeAt(ctx context.Context, thread string, pick func([]Answer) map[int]bool) ([]Answer, error) {
	var gone []Answer
	err := a.update(ctx, thread, func(all []Answer) ([]Answer, bool) {
		chosen := pick(all)
		if len(chosen) == 0 {
			return all, false
		}
		var keep []Answer
		for i, k := range all {
			if chosen[i] {
				gone = append(gone, k)
			} else {
				keep = append(keep, k)
			}
		}
		return keep, true
	})
	return gone, err
}

// update runs fn over thread's pending answers, its folder locked, and
// writes what fn returns when it says they changed. A folder that isn't
// there is made only for a change. An answers.json that doesn't read is
// set aside first (setAside), so fn starts from none.
func (a *Answers) update(ctx context.Context, thread string, fn func(all []Answer) ([]Answer, bool)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, err := a.Paths.Conversation(thread)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if _, changed := fn(nil); !changed {
			return nil
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	dir, unlock, err := folder.Lock(ctx, a.Paths, thread)
	if err != nil {
		return err
	}
	defer unlock()
	all, err := readAnswers(dir, thread)
	if errors.Is(err, store.ErrCorrupt) {
		all, err = nil, a.setAside(ctx, thread, filepath.Join(dir, folder.Answers), err)
	}
	if err != nil {
		return err
	}
	out, changed := fn(all)
	if !changed {
		return nil
	}
	return writeAnswers(dir, out)
}

// setAside renames a corrupt answers.json of thread to
// answers.json.corrupt-<time> beside it (folder.AnswersAside), for a
// person to look at, and names it in the log (recovery.Asides). Its
// conversation goes on with no answers pending; the others never
// noticed. A rename that fails leaves it where it is, to be written over
// by nothing: the error says so.
func (a *Answers) setAside(ctx context.Context, thread, path string, why error) error {
	a.init()
	if _, err := a.asides.SetAside(ctx, path, why, a.now(), slog.String("thread", thread)); err != nil {
		return fmt.Errorf("%w: its answers don't read and couldn't be set aside", store.ErrCorrupt)
	}
	return nil
}

// eachFolder calls fn with each conversation folder of the agent, in the
// order of their names, passing over names that aren't a thread's (a
// convert's leftovers, events.sqlite). A folder fn fails is named in the
// log and passed over: the error returned is the agent's folder's alone.
func (a *Answers) eachFolder(ctx context.Context, fn func(thread, dir string) error) error {
	chats, err := router.OpenChats(a.Paths) // never through a link
	if chats == nil || err != nil {
		return err
	}
	entries, err := chats.ReadDir(-1)
	chats.Close()
	if err != nil {
		return err
	}
	slices.SortFunc(entries, func(x, y os.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		thread, err := contract.FolderThread(e.Name())
		if err != nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(thread, filepath.Join(a.Paths.Chats(), e.Name())); err != nil {
			a.logger().LogAttrs(ctx, slog.LevelWarn, "pass over a conversation's answers", slog.String("thread", thread), slog.String("err", err.Error()))
		}
	}
	return nil
}

// parse reads answers.json of thread's folder: a JSON list of answers,
// each with an id of its folder and of that thread.
func parse(b []byte, thread string) ([]Answer, error) {
	var all []Answer
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("%w: %s is not a list of answers: %v", store.ErrCorrupt, folder.Answers, err)
	}
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, k := range all {
		switch {
		case k.Thread != thread:
			return nil, fmt.Errorf("%w: %s: answer %d is of thread %q, not %q", store.ErrCorrupt, folder.Answers, i, k.Thread, thread)
		case !strings.HasPrefix(k.ID, name+idSep) || len(k.ID) == len(name+idSep):
			return nil, fmt.Errorf("%w: %s: answer %d has no id of its folder", store.ErrCorrupt, folder.Answers, i)
		case seen[k.ID]:
			return nil, fmt.Errorf("%w: %s: id %q twice", store.ErrCorrupt, folder.Answers, k.ID)
		}
		seen[k.ID] = true
	}
	return all, nil
}

// readAnswers reads dir's answers.json, none when there is no file.
func readAnswers(dir, thread string) ([]Answer, error) {
	b, err := fsx.ReadLimit(filepath.Join(dir, folder.Answers), maxFile)
	if errors.Is(err, fsx.ErrTooBig) {
		return nil, fmt.Errorf("%w: %s is over %d bytes", store.ErrCorrupt, folder.Answers, maxFile)
	}
	if err != nil || b == nil {
		return nil, err
	}
	return parse(b, thread)
}

// writeAnswers replaces dir's answers.json with all, or removes it when
// there are none left.
func writeAnswers(dir string, all []Answer) error {
	path := filepath.Join(dir, folder.Answers)
	if len(all) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fsx.SyncDir(dir)
	}
	b, err := json.MarshalIndent(all, "", "\t")
	if err != nil {
		return err
	}
	return fsx.Replace(path, append(b, '\n'), true)
}

func sortAnswers(all []Answer) {
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].At.Equal(all[j].At) {
			return all[i].At.Before(all[j].At)
		}
		return all[i].ID < all[j].ID
	})
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails: crypto/rand panics rather than return an error
	return hex.EncodeToString(b)
}
