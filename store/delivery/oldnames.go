package delivery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lnk-dev/link/internal/fsx"
)

// OldSendingDir is what SendingDir was called before: a home an older
// Link wrote may hold its answers sending there. MoveOld moves them into
// SendingDir; until it has, every listing of the answers sending reads
// both folders. Like SendingDir, it names no thread's folder (it has no
// "-"), so the readers of the conversations folder pass over both.
const OldSendingDir = "telling"

// MoveOld moves the answers sending that an older Link left in
// OldSendingDir into SendingDir and removes the old folder. With no
// SendingDir yet, the old folder is renamed whole and the conversations
// folder synced. With both (a crash mid-move, or an older Link that ran
// after), each file is renamed in on its own, never over a later write
// of the same answer, the new folder synced, and the old one removed
// once empty. Each step is one rename, so a crash between any two leaves
// every answer under one of the two names, and the next MoveOld goes on
// from there. The harness calls it as it opens an agent's store; every
// listing of the answers sending (holds) calls it too, so what an older
// program wrote after is moved at the next recover.
func (a *Answers) MoveOld() error {
	if err := moveOld(a.Paths.Chats()); err != nil {
		return fmt.Errorf("move the answers sending from chats/%s to chats/%s: %w", OldSendingDir, SendingDir, err)
	}
	return nil
}

func moveOld(chats string) error {
	old := filepath.Join(chats, OldSendingDir)
	dir := filepath.Join(chats, SendingDir)
	if fi, err := os.Lstat(old); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	} else if fi.Mode()&fs.ModeSymlink != 0 {
		return &fs.PathError{Op: "open", Path: old, Err: fsx.ErrLink} // never moved in from where it points
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		err := os.Rename(old, dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) { // moved, by this or another process
			return fsx.SyncDir(chats)
		}
		// SendingDir made meanwhile, by a hold: moved file by file.
	}
	entries, err := os.ReadDir(old)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	var errs []error
	for _, e := range entries {
		from := filepath.Join(old, e.Name())
		if strings.HasPrefix(e.Name(), spareName) {
			// A spare holds no answer; its owner, if it lives, makes a
			// file anew.
			if err := os.Remove(from); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if err := moveIn(from, filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	if err := fsx.SyncDir(dir); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := os.Remove(old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err // an older program's hold made meanwhile: moved next time
	}
	return fsx.SyncDir(chats)
}

// moveIn renames from to to, in one step. When to is there already, it
// is the same answer's file (ids are random): an older program wrote it
// again in the old folder after its first move. The later write is
// kept: from is renamed over to when it is newer, else removed.
func moveIn(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // let go, or moved, meanwhile
		}
		return err
	}
	ti, err := os.Lstat(to)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case os.SameFile(fi, ti) || !fi.ModTime().After(ti.ModTime()):
		if err := os.Remove(from); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.Rename(from, to); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
