package router

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/store/internal/foldertime"
)

// A folder's kind is trusted foldertime.WaitFine after its last change where
// its times show a part of a second (its file system keeps them finer),
// foldertime.Wait after where they don't.
func TestKindSettled(t *testing.T) {
	at := func(sec, nsec int64) unix.Timespec { return unix.Timespec{Sec: sec, Nsec: nsec} }
	fine := dirStamp{known: true, mtime: at(1000, 5e8), ctime: at(1000, 6e8)}
	whole := dirStamp{known: true, mtime: at(1000, 0), ctime: at(1000, 0)}
	last := time.Unix(1000, 6e8) // the latest of each stamp's times but whole's, 1000.0
	for _, c := range []struct {
		name  string
		s     dirStamp
		after time.Duration
		want  bool
	}{
		{"fine, just changed", fine, foldertime.WaitFine - time.Millisecond, false},
		{"fine, settled", fine, foldertime.WaitFine, true},
		{"whole seconds, past foldertime.WaitFine", whole, foldertime.Wait - 6e8 - time.Millisecond, false},
		{"whole seconds, settled", whole, foldertime.Wait - 6e8, true},
	} {
		if got := c.s.settled(last.Add(c.after)); got != c.want {
			t.Errorf("%s: settled %v, want %v", c.name, got, c.want)
		}
	}
}
