package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// etcRoot is the system's settings folder, read in parts.
const etcRoot = "/etc"

// etcCover is the parts of /etc a command may read: the fewest files and
// folders that hold everything in it any user of the machine may read
// (mode o+r, o+rx for a folder) and nothing else, so /etc/shadow, a
// host's ssh keys and ssl/private stay the kernel's refusal even for a
// command run as root. It is read again when a minute old.
func etcCover() []string {
	etcMu.Lock()
	defer etcMu.Unlock()
	if etcCached == nil || time.Since(etcAt) > time.Minute {
		etcCached, _ = cover(etcRoot)
		etcAt = time.Now()
	}
	return etcCached
}

var (
	etcMu     sync.Mutex
	etcCached []string
	etcAt     time.Time
)

// cover is the fewest paths under dir (not dir itself) that hold
// everything readable by any user beneath it; whole is true when that is
// every entry, so dir itself covers it.
func cover(dir string) (paths []string, whole bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	whole = true
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Stat(p) // a link is judged by what it names, where its rule lands
		if err != nil {
			whole = false
			continue
		}
		if !anyoneReads(fi) {
			whole = false
			continue
		}
		if fi.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			sub, all := cover(p)
			if !all {
				whole = false
				paths = append(paths, sub...)
				continue
			}
		}
		paths = append(paths, p)
	}
	return paths, whole
}

// anyoneReads says whether every user may read fi (and enter it, a
// folder).
func anyoneReads(fi fs.FileInfo) bool {
	m := fi.Mode().Perm()
	if fi.IsDir() {
		return m&0o005 == 0o005
	}
	return m&0o004 != 0
}
