package log

import (
	"os"

	"github.com/lnk-dev/link/internal/fsx"
)

// WaitAhead waits for the folder being made ahead, if one is.
func (d *Driver) WaitAhead() {
	if d.ahead != nil {
		d.ahead.wg.Wait()
	}
}

// Madeahead says whether d makes folders ahead here.
func (d *Driver) MadeAhead() bool { return d.ahead != nil }

// What takeAhead did, for its test.
const (
	AheadNone    = aheadNone
	AheadTaken   = aheadTaken
	AheadInPlace = aheadInPlace
)

var TakeAhead = takeAhead

// WatchSyncDir calls seen with each folder whose names are synced, until
// the test ends.
func WatchSyncDir(t interface{ Cleanup(func()) }, seen func(dir string)) {
	was, wasFolder := syncDir, syncFolder
	syncDir = func(dir string) error {
		seen(dir)
		return was(dir)
	}
	syncFolder = func(f fsx.Handle) error {
		seen(f.Name())
		return wasFolder(f)
	}
	t.Cleanup(func() { syncDir, syncFolder = was, wasFolder })
}

// NoSyncs has appends skip their flush until the benchmark ends, so what
// it measures is the calls around it.
func NoSyncs(b interface{ Cleanup(func()) }) {
	was := datasync
	datasync = func(*fsx.File) error { return nil }
	b.Cleanup(func() { datasync = was })
}

// CountOpens counts the conversation files the driver opens (events.jsonl,
// each call's own), until the test ends.
func CountOpens(t interface{ Cleanup(func()) }) (opened func() int) {
	was := openFile
	n := 0
	openFile = func(name string, flag int, perm os.FileMode) (*fsx.File, error) {
		n++
		return was(name, flag, perm)
	}
	t.Cleanup(func() { openFile = was })
	return func() int { return n }
}

// SpreadFolders and MakeAheadIn, for their test and benchmark.
var (
	SpreadFolders = spreadFolders
	MakeAheadIn   = func(chats string, files ...string) error {
		made, err := makeAheadIn(chats, files)
		if made != nil {
			made.sync()
			made.close()
		}
		return err
	}
)
