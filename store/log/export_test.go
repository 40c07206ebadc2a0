package log

import "os"

// WaitAhead waits for the folder being made ahead, if one is.
func (d *Driver) WaitAhead() {
	if d.ahead != nil {
		d.ahead.wg.Wait()
	}
}

// Madeahead says whether d makes folders ahead here.
func (d *Driver) MadeAhead() bool { return d.ahead != nil }

// What takeSpare did, for its test.
const (
	SpareNone    = spareNone
	SpareTaken   = spareTaken
	SpareInPlace = spareInPlace
)

var TakeSpare = takeSpare

// WatchSyncDir calls seen with each folder whose names are synced, until
// the test ends.
func WatchSyncDir(t interface{ Cleanup(func()) }, seen func(dir string)) {
	was, wasFolder := syncDir, syncFolder
	syncDir = func(dir string) error {
		seen(dir)
		return was(dir)
	}
	syncFolder = func(f *os.File) error {
		seen(f.Name())
		return wasFolder(f)
	}
	t.Cleanup(func() { syncDir, syncFolder = was, wasFolder })
}
