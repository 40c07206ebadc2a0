package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
)

// Kept is an answer nobody took: a crashed turn's, finished after, or one
// whose caller went before it was told it. It waits in answers.json of its
// conversation's folder until it is handed over.
type Kept struct {
	ID     string    `json:"id"`     // opaque: the folder and a random part
	Thread string    `json:"thread"` // the conversation it answers in
	Text   string    `json:"text"`
	Kept   time.Time `json:"kept"`          // when it was kept
	Seq    int64     `json:"seq,omitempty"` // the answer's event, when it has one
	// EventTime is the time its event carries, with Seq naming it exactly:
	// set on an answer kept while told (KeepTellingEvent), just before its
	// event is stored, so a recover can tell whether it was.
	EventTime time.Time `json:"eventTime,omitzero"`
	// Held: kept for the one who asks for its thread's own (KeepHeld),
	// left kept by a single-phase recover.
	Held bool `json:"held,omitempty"`
}

// idSep parts an answer's id: its folder, then a random part. No folder
// name holds it (contract.ThreadFolder).
const idSep = "~"

// Keep keeps an answer of thread nobody took, kept at at (the zero time is
// now) and, when it has one, its event's number, and returns its id. The
// file is on the disk before Keep returns.
func (f *Folders) Keep(ctx context.Context, thread, text string, at time.Time, seq int64) (string, error) {
	return f.keep(ctx, thread, text, at, seq, false)
}

// keep is Keep, and KeepHeld when held.
func (f *Folders) keep(ctx context.Context, thread, text string, at time.Time, seq int64, held bool) (string, error) {
	if at.IsZero() {
		at = f.now()
	}
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return "", err
	}
	k := Kept{ID: name + idSep + randomHex(12), Thread: thread, Text: text, Kept: at.UTC(), Seq: seq, Held: held}
	err = f.update(ctx, thread, func(dir string) error {
		all, err := readAnswers(dir, thread)
		if err != nil {
			return err
		}
		return writeAnswers(dir, append(all, k))
	})
	if err != nil {
		return "", fmt.Errorf("keep an answer of %s: %w", thread, err)
	}
	return k.ID, nil
}

// Pending lists the answers still to hand over, of every conversation of
// the agent, oldest first, those kept while their callers are told them
// (KeepTelling) with them.
func (f *Folders) Pending(ctx context.Context) ([]Kept, error) {
	out, err := f.telling()
	if err == nil {
		err = f.eachFolder(ctx, func(thread, dir string) error {
			all, err := readAnswers(dir, thread)
			out = append(out, all...)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("list answers to hand over: %w", err)
	}
	sortKept(out)
	return out, nil
}

// Done lets the answers with ids go; an id that names none is passed over.
func (f *Folders) Done(ctx context.Context, ids []string) error {
	byThread := map[string]map[string]bool{}
	for _, id := range ids {
		if err := f.Told(ctx, id); err != nil {
			return err
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
	for _, thread := range threads {
		ids := byThread[thread]
		_, err := f.remove(ctx, thread, func(all []Kept) map[int]bool {
			chosen := map[int]bool{}
			for i, k := range all {
				if ids[k.ID] {
					chosen[i] = true
				}
			}
			return chosen
		})
		if err != nil {
			return fmt.Errorf("let answers of %s go: %w", thread, err)
		}
	}
	return nil
}

// KeptAfter hands over the first answer of thread kept at or after t, the
// one that answered a message sent at t, and forgets it; ok is false when
// there is none. One kept before t was never the message's.
func (f *Folders) KeptAfter(ctx context.Context, thread string, t time.Time) (k Kept, ok bool, err error) {
	dir, err := f.Paths.Conversation(thread)
	if err != nil {
		return Kept{}, false, err
	}
	if _, err := os.Stat(filepath.Join(dir, AnswersFile)); errors.Is(err, fs.ErrNotExist) {
		return Kept{}, false, nil
	}
	gone, err := f.remove(ctx, thread, func(all []Kept) map[int]bool {
		first := -1
		for i, c := range all {
			if !c.Kept.Before(t) && (first < 0 || c.Kept.Before(all[first].Kept)) {
				first = i
			}
		}
		if first < 0 {
			return nil
		}
		return map[int]bool{first: true}
	})
	if err != nil || len(gone) == 0 {
		return Kept{}, false, err
	}
	return gone[0], true, nil
}

// remove forgets the answers of thread that pick chooses, by their place,
// keeping the rest in their order, and returns those it forgot.
func (f *Folders) remove(ctx context.Context, thread string, pick func([]Kept) map[int]bool) ([]Kept, error) {
	dir, err := f.Paths.Conversation(thread)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var gone []Kept
	err = f.update(ctx, thread, func(dir string) error {
		all, err := readAnswers(dir, thread)
		if err != nil || len(all) == 0 {
			return err
		}
		chosen := pick(all)
		if len(chosen) == 0 {
			return nil
		}
		var keep []Kept
		for i, k := range all {
			if chosen[i] {
				gone = append(gone, k)
			} else {
				keep = append(keep, k)
			}
		}
		return writeAnswers(dir, keep)
	})
	return gone, err
}

// takeAll hands over every answer of every conversation and forgets them:
// each file is rewritten before the answers are returned, so an answer is
// handed over once at most.
func (f *Folders) takeAll(ctx context.Context) ([]Kept, error) {
	var out []Kept
	err := f.eachFolder(ctx, func(thread, dir string) error {
		if _, err := os.Stat(filepath.Join(dir, AnswersFile)); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		gone, err := f.remove(ctx, thread, func(all []Kept) map[int]bool {
			chosen := map[int]bool{}
			for i, k := range all {
				if !k.Held {
					chosen[i] = true
				}
			}
			return chosen
		})
		out = append(out, gone...)
		return err
	})
	if err != nil {
		return out, fmt.Errorf("hand over answers: %w", err)
	}
	sortKept(out)
	return out, nil
}

// Recover answers _link/recover. With no params it hands over every
// answer nobody took and forgets it, so each is handed over once at most:
// one lost on its way is lost. Two-phase, it hands over each with its id
// and keeps it, handing it over again at each ask until done lets it go,
// so each is handed over at least once. A done request answers none.
func (f *Folders) Recover(ctx context.Context, p contract.RecoverParams) (contract.RecoverResult, error) {
	res := contract.RecoverResult{Answers: []contract.RecoveredAnswer{}}
	if p.Done != nil {
		return res, f.Done(ctx, p.Done)
	}
	if err := f.adoptTelling(ctx, nil); err != nil {
		return res, err
	}
	var all []Kept
	var err error
	if p.TwoPhase {
		all, err = f.Pending(ctx)
	} else {
		all, err = f.takeAll(ctx)
	}
	return recovered(res, all, p.TwoPhase, err)
}

// recovered adds all to res, as a recover hands them over (with their ids
// two-phase). A single phase's error after some were taken is let go:
// those taken are gone from their files, so returned they're handed over,
// and an error would lose them; the folder that failed fails again at the
// next ask.
func recovered(res contract.RecoverResult, all []Kept, twoPhase bool, err error) (contract.RecoverResult, error) {
	for _, k := range all {
		a := contract.RecoveredAnswer{Thread: k.Thread, Text: k.Text}
		if twoPhase {
			a.ID = k.ID
		}
		res.Answers = append(res.Answers, a)
	}
	if err != nil && !twoPhase && len(all) > 0 {
		return res, nil
	}
	return res, err
}

// eachFolder calls fn with each conversation folder of the agent, in the
// order of their names. Names that aren't a thread's (a convert's
// leftovers, events.sqlite) are passed over.
func (f *Folders) eachFolder(ctx context.Context, fn func(thread, dir string) error) error {
	entries, err := os.ReadDir(f.Paths.Chats())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
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
		if err := fn(thread, filepath.Join(f.Paths.Chats(), e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// ParseAnswers reads answers.json of thread's folder: a JSON list of kept
// answers, each with an id and of that thread.
func ParseAnswers(b []byte, thread string) ([]Kept, error) {
	var all []Kept
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("%w: %s is not a list of answers: %v", ErrCorrupt, AnswersFile, err)
	}
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, k := range all {
		switch {
		case k.Thread != thread:
			return nil, fmt.Errorf("%w: %s: answer %d is of thread %q, not %q", ErrCorrupt, AnswersFile, i, k.Thread, thread)
		case !strings.HasPrefix(k.ID, name+idSep) || len(k.ID) == len(name+idSep):
			return nil, fmt.Errorf("%w: %s: answer %d has no id of its folder", ErrCorrupt, AnswersFile, i)
		case seen[k.ID]:
			return nil, fmt.Errorf("%w: %s: id %q twice", ErrCorrupt, AnswersFile, k.ID)
		}
		seen[k.ID] = true
	}
	return all, nil
}

func readAnswers(dir, thread string) ([]Kept, error) {
	b, err := readKept(filepath.Join(dir, AnswersFile))
	if err != nil || b == nil {
		return nil, err
	}
	return ParseAnswers(b, thread)
}

// writeAnswers replaces dir's answers.json with all, or removes it when
// there are none left.
func writeAnswers(dir string, all []Kept) error {
	path := filepath.Join(dir, AnswersFile)
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
	return writeAtomic(path, append(b, '\n'))
}

func sortKept(all []Kept) {
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].Kept.Equal(all[j].Kept) {
			return all[i].Kept.Before(all[j].Kept)
		}
		return all[i].ID < all[j].ID
	})
}
