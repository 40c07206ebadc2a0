package harness

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/lnk-dev/link/store/driver"
)

// sweepFresh is how long before a sweep a file last changed for its
// fingerprint to be trusted: a write in the same tick of the file
// system's clock (coarse on some, two seconds on FAT) could leave size
// and time as they were, so a file changed since is read again.
const sweepFresh = 2 * time.Second

// fileMark is one stat of a file: its size and modification time in
// nanoseconds, or that it isn't there.
type fileMark struct {
	size, mod int64
	there     bool
}

// maxMarkFiles bounds the event files a fingerprint stats: a driver that
// declares more is read at every sweep.
const maxMarkFiles = 4

// sweepMark is the fingerprint of the events of a conversation kept in
// its own folder (driver.Driver.InFolder: the log, compact): the folder's kind
// and one stat of each file its driver declares holds its events.
type sweepMark struct {
	kind  string
	files [maxMarkFiles]fileMark
}

// sweepSeen remembers, per agent and thread, the fingerprint of each
// conversation a sweep found nothing waiting in, so the next sweep
// passes over one whose fingerprint is the same without reading it.
//
// Why that is safe: such a driver declares that every event it appends
// changes the size or modification time of one of its event files
// (driver.Driver.Events; the log's file only grows, compact's tail
// only grows or moves into its frames, a fold writing both), and the
// stats are taken before the read, so what the read saw is at least what
// the fingerprint stands for. A file changed within
// sweepFresh of the sweep isn't trusted (a coarse clock could give a
// later write the same time). A conversation converted to another driver
// changes the files and its folder's kind, which is part of the
// fingerprint; any other driver (sqlite, gcs, the bridge) is read at
// every sweep. A conversation found waiting is never remembered, and
// the threads no longer listed are dropped at each sweep. It is only a
// saving: a process without it reads every conversation once.
type sweepSeen struct {
	mu     sync.Mutex
	agents map[string]map[string]sweepMark
}

// last is what agent's previous sweep remembered (nil for none).
func (s *sweepSeen) last(agent string) map[string]sweepMark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agents[agent]
}

// keep replaces what is remembered of agent's conversations by seen.
func (s *sweepSeen) keep(agent string, seen map[string]sweepMark) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.agents == nil {
		s.agents = map[string]map[string]sweepMark{}
	}
	if len(seen) == 0 {
		delete(s.agents, agent)
		return
	}
	s.agents[agent] = seen
}

// markOf is the fingerprint of the conversation in dir, and whether it
// can have one: kept in its own folder by a driver that declared its
// files (driver.Lookup), each last changed before since.
func markOf(dir string, since time.Time) (sweepMark, bool) {
	kind, err := driver.Of(dir)
	if err != nil {
		return sweepMark{}, false
	}
	fk, ok := driver.Lookup(kind)
	if !ok || !fk.InFolder() || len(fk.Events) > maxMarkFiles {
		return sweepMark{}, false
	}
	m := sweepMark{kind: kind}
	for i, name := range fk.Events {
		if m.files[i], ok = statMark(filepath.Join(dir, name), since); !ok {
			return sweepMark{}, false
		}
	}
	return m, true
}

// statMark is one stat of name; false when it can't be had or the file
// changed at or after since.
func statMark(name string, since time.Time) (fileMark, bool) {
	info, err := os.Stat(name)
	if os.IsNotExist(err) {
		return fileMark{}, true
	}
	if err != nil || !info.ModTime().Before(since) {
		return fileMark{}, false
	}
	return fileMark{size: info.Size(), mod: info.ModTime().UnixNano(), there: true}, true
}
