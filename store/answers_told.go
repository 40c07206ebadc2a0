package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
)

// TellingID is a new id of an answer of thread, for KeepTelling: known
// before the answer is kept, so its keeper can pass it over at a
// recover (RecoverExcept) from before it is on the disk.
func (f *Folders) TellingID(thread string) (string, error) {
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return "", err
	}
	return name + idSep + randomHex(12), nil
}

// KeepTelling keeps an answer of thread, with id from TellingID, while
// its caller is being told it, as Keep does but syncing nothing: the file
// survives the process's kill (the page cache keeps it), not a machine's
// stop, which loses at worst this keep. Told lets it go once the caller
// was told.
func (f *Folders) KeepTelling(ctx context.Context, id, thread, text string, at time.Time) error {
	if at.IsZero() {
		at = f.now()
	}
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(id, name+idSep) || len(id) == len(name+idSep) {
		return fmt.Errorf("keep an answer of %s while it is told: id %q is not of its folder", thread, id)
	}
	k := Kept{ID: id, Thread: thread, Text: text, Kept: at.UTC()}
	err = f.update(ctx, thread, func(dir string) error {
		all, err := readAnswers(dir, thread)
		if err != nil {
			return err
		}
		return writeAnswersUnsynced(dir, append(all, k))
	})
	if err != nil {
		return fmt.Errorf("keep an answer of %s while it is told: %w", thread, err)
	}
	return nil
}

// RecoverExcept answers _link/recover as Recover does, passing over the
// answers skip names (those still being told): neither handed over nor,
// single phase, taken.
func (f *Folders) RecoverExcept(ctx context.Context, p contract.RecoverParams, skip func(id string) bool) (contract.RecoverResult, error) {
	if skip == nil || p.Done != nil {
		return f.Recover(ctx, p)
	}
	res := contract.RecoverResult{Answers: []contract.RecoveredAnswer{}}
	var all []Kept
	var err error
	if p.TwoPhase {
		all, err = f.Pending(ctx)
		all = slices.DeleteFunc(all, func(k Kept) bool { return skip(k.ID) })
	} else {
		err = f.eachFolder(ctx, func(thread, dir string) error {
			if _, err := os.Stat(filepath.Join(dir, AnswersFile)); errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			gone, err := f.remove(ctx, thread, func(all []Kept) map[int]bool {
				chosen := map[int]bool{}
				for i, k := range all {
					if !k.Held && !skip(k.ID) {
						chosen[i] = true
					}
				}
				return chosen
			})
			all = append(all, gone...)
			return err
		})
		sortKept(all)
		if err != nil {
			err = fmt.Errorf("hand over answers: %w", err)
		}
	}
	for _, k := range all {
		a := contract.RecoveredAnswer{Thread: k.Thread, Text: k.Text}
		if p.TwoPhase {
			a.ID = k.ID
		}
		res.Answers = append(res.Answers, a)
	}
	if err != nil && !p.TwoPhase && len(all) > 0 {
		// Those taken are gone from their files: handed over, as Recover.
		return res, nil
	}
	return res, err
}

// Told lets the answer id go, kept by KeepTelling, syncing nothing; an id
// that names none is passed over.
func (f *Folders) Told(ctx context.Context, id string) error {
	name, _, ok := strings.Cut(id, idSep)
	if !ok {
		return nil
	}
	thread, err := contract.FolderThread(name)
	if err != nil {
		return nil
	}
	dir, err := f.Paths.Conversation(thread)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, AnswersFile)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	err = f.update(ctx, thread, func(dir string) error {
		all, err := readAnswers(dir, thread)
		if err != nil {
			return err
		}
		keep := all[:0:0]
		for _, k := range all {
			if k.ID != id {
				keep = append(keep, k)
			}
		}
		if len(keep) == len(all) {
			return nil
		}
		return writeAnswersUnsynced(dir, keep)
	})
	if err != nil {
		return fmt.Errorf("let the answer told of %s go: %w", thread, err)
	}
	return nil
}

// writeAnswersUnsynced is writeAnswers without a sync.
func writeAnswersUnsynced(dir string, all []Kept) error {
	path := filepath.Join(dir, AnswersFile)
	if len(all) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.MarshalIndent(all, "", "\t")
	if err != nil {
		return err
	}
	return writeDerived(path, append(b, '\n'))
}
