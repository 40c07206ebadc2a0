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
	"github.com/lnk-dev/link/internal/fsx"
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

// TellingDir is the folder, in the agent's conversations folder, of the
// answers kept while their callers are told them: a file each, named by
// the answer's id, made by KeepTelling and removed by Told. No thread's
// folder has its name (contract.FolderThread refuses it).
const TellingDir = "telling"

// KeepTelling keeps an answer of thread, with id from TellingID, while
// its caller is being told it: one small file made in TellingDir, synced
// nowhere (it survives the process's kill, as the page cache keeps it,
// not a machine's stop, which loses at worst this keep). Told removes
// it once the caller was told; a recover that finds it still there first
// moves it into its conversation's answers.json (adoptTelling).
func (f *Folders) KeepTelling(ctx context.Context, id, thread, text string, at time.Time) error {
	return f.KeepTellingEvent(ctx, Kept{ID: id, Thread: thread, Text: text, Kept: at}, false)
}

// KeepTellingEvent keeps k as KeepTelling does, k.Seq and k.EventTime
// naming the event its answer is about to be stored as, so a recover can
// tell whether it was (docs/decisions.md, "The answer told, or kept").
// With again, the keep already made under k.ID is written over, whole or
// not at all (a new file renamed over it): the append retried under
// another number.
func (f *Folders) KeepTellingEvent(ctx context.Context, k Kept, again bool) error {
	if k.Kept.IsZero() {
		k.Kept = f.now()
	}
	k.Kept = k.Kept.UTC()
	if !k.EventTime.IsZero() {
		k.EventTime = k.EventTime.UTC()
	}
	k.Held = false
	name, err := contract.ThreadFolder(k.Thread)
	if err != nil {
		return err
	}
	id := k.ID
	if !strings.HasPrefix(id, name+idSep) || len(id) == len(name+idSep) || strings.ContainsAny(id, `/\`) {
		return fmt.Errorf("keep an answer of %s while it is told: id %q is not of its folder", k.Thread, id)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	path := f.tellingPath(id)
	if again {
		if err := writeDerived(path, b); err != nil {
			return fmt.Errorf("keep an answer of %s while it is told, again: %w", k.Thread, err)
		}
		return nil
	}
	fh, err := fsx.Open(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err = mkdirAll(filepath.Dir(path)); err == nil {
			fh, err = fsx.Open(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	if err != nil {
		return fmt.Errorf("keep an answer of %s while it is told: %w", k.Thread, err)
	}
	_, err = fh.Write(b)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("keep an answer of %s while it is told: %w", k.Thread, err)
	}
	return nil
}

func (f *Folders) tellingPath(id string) string {
	return filepath.Join(f.Paths.Chats(), TellingDir, id+".json")
}

// Telling lists the answers kept while their callers are told them
// (KeepTelling), in no order: those whose teller is gone among them, for
// the harness to settle before a recover (each dropped with Told).
func (f *Folders) Telling(ctx context.Context) ([]Kept, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	all, err := f.telling()
	if err != nil {
		return nil, fmt.Errorf("read answers being told: %w", err)
	}
	return all, nil
}

// telling reads the answers kept while told, in TellingDir. A file that
// doesn't read as one is passed over (a machine's stop may leave one
// empty: it never held an answer on the disk).
func (f *Folders) telling() ([]Kept, error) {
	entries, err := os.ReadDir(filepath.Join(f.Paths.Chats(), TellingDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Kept
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		b, err := readKept(f.tellingPath(id))
		if err != nil {
			return nil, err
		}
		var k Kept
		if json.Unmarshal(b, &k) != nil || k.ID != id {
			continue
		}
		if name, err := contract.ThreadFolder(k.Thread); err != nil || !strings.HasPrefix(id, name+idSep) {
			continue
		}
		out = append(out, k)
	}
	return out, nil
}

// adoptTelling moves each answer kept while told that skip doesn't name
// (its teller gone: killed before it told, or it failed) into its
// conversation's answers.json, synced, then removes its file, so it is
// handed over as any kept answer is. One already there (a kill between
// the two) is only removed.
func (f *Folders) adoptTelling(ctx context.Context, skip func(id string) bool) error {
	all, err := f.telling()
	if err != nil {
		return fmt.Errorf("read answers being told: %w", err)
	}
	for _, k := range all {
		if skip != nil && skip(k.ID) {
			continue
		}
		err := f.update(ctx, k.Thread, func(dir string) error {
			kept, err := readAnswers(dir, k.Thread)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(kept, func(o Kept) bool { return o.ID == k.ID }) {
				if err := writeAnswers(dir, append(kept, k)); err != nil {
					return err
				}
			}
			return os.Remove(f.tellingPath(k.ID))
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("keep the answer %s its teller left: %w", k.ID, err)
		}
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
	if err := f.adoptTelling(ctx, skip); err != nil {
		return res, err
	}
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
	return recovered(res, all, p.TwoPhase, err)
}

// Told lets the answer id go, kept by KeepTelling, syncing nothing; an id
// that names none is passed over.
func (f *Folders) Told(ctx context.Context, id string) error {
	if !strings.Contains(id, idSep) || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return nil
	}
	if err := os.Remove(f.tellingPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("let the answer told %s go: %w", id, err)
	}
	return nil
}
