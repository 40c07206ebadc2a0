package scheduler

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lnk-dev/link/internal/fsx"
)

// book is the schedules' folder, <home>/scheduler/schedules/: one file
// a schedule, <id>.json, its owner's alone (0700, each 0600), written
// whole (a temporary file synced, renamed, the folder synced) and read
// again at the scheduler's start.
type book struct{ dir string }

// maxScheduleFile bounds a schedule's file as it is read back.
const maxScheduleFile = 4*MaxText + 4<<10

// openFolder makes dir (0700) if it isn't there and refuses one that is
// a symbolic link or not a folder.
func openFolder(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s: not a folder (a symbolic link is never followed)", dir)
	}
	return os.Chmod(dir, 0o700)
}

func openBook(dir string) (*book, error) {
	if err := openFolder(dir); err != nil {
		return nil, fmt.Errorf("open the schedules: %w", err)
	}
	return &book{dir: dir}, nil
}

func (b *book) file(id string) string { return filepath.Join(b.dir, id+".json") }

// write keeps s, replacing the schedule of its id.
func (b *book) write(s *Schedule) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := fsx.Replace(b.file(s.ID), data, true); err != nil {
		return fmt.Errorf("keep schedule %s: %w", s.ID, err)
	}
	return nil
}

// remove forgets schedule id.
func (b *book) remove(id string) error {
	err := os.Remove(b.file(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("forget schedule %s: %w", id, err)
	}
	return fsx.SyncDir(b.dir)
}

// read reads every schedule kept. A file that isn't one (cut short, by
// hand) is named in bad and left as it is; a write a crash cut short left
// its temporary file, which is removed.
func (b *book) read() (all []*Schedule, bad []error, err error) {
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read the schedules: %w", err)
	}
	all = make([]*Schedule, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			if strings.Contains(name, ".json.") {
				os.Remove(filepath.Join(b.dir, name))
			}
			continue
		}
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || checkID(id) != nil {
			continue
		}
		data, err := fsx.ReadLimit(filepath.Join(b.dir, name), maxScheduleFile)
		if err != nil {
			bad = append(bad, fmt.Errorf("schedule %s: %w", name, err))
			continue
		}
		var s Schedule
		if err := json.Unmarshal(data, &s); err != nil {
			bad = append(bad, fmt.Errorf("schedule %s: not a schedule: %v", name, err))
			continue
		}
		if err := s.check(); err != nil || s.ID != id {
			bad = append(bad, fmt.Errorf("schedule %s: not a schedule: %v", name, err))
			continue
		}
		all = append(all, &s)
	}
	return all, bad, nil
}
