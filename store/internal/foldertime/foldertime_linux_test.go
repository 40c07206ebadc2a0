package foldertime

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A folder is trusted WaitFine after its last change where
// its times show a part of a second (its file system keeps them finer),
// Wait after where they don't.
func TestTrusted(t *testing.T) {
	at := func(sec, nsec int64) unix.Timespec { return unix.Timespec{Sec: sec, Nsec: nsec} }
	fine := [2]unix.Timespec{at(1000, 5e8), at(1000, 6e8)}
	whole := [2]unix.Timespec{at(1000, 0), at(1000, 0)}
	half := [2]unix.Timespec{at(1000, 0), at(1000, 6e8)} // FAT: its mtime in whole seconds
	last := time.Unix(1000, 6e8)                         // the latest of each stamp's times but whole's, 1000.0
	for _, c := range []struct {
		name  string
		times [2]unix.Timespec // mtime, ctime
		after time.Duration
		want  bool
	}{
		{"fine, just changed", fine, WaitFine - time.Millisecond, false},
		{"fine, trusted", fine, WaitFine, true},
		{"whole seconds, past WaitFine", whole, Wait - 6e8 - time.Millisecond, false},
		{"whole seconds, trusted", whole, Wait - 6e8, true},
		{"an mtime in whole seconds", half, Wait - time.Millisecond, false},
		{"an mtime in whole seconds, trusted", half, Wait, true},
	} {
		if got := Trusted(c.times[0], c.times[1], last.Add(c.after)); got != c.want {
			t.Errorf("%s: trusted %v, want %v", c.name, got, c.want)
		}
	}
}
