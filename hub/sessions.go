package hub

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/lnk-dev/link/internal/fsx"
)

// sessionFile keeps which of the harness's sessions is each thread's, in
// one JSON file written whole (a temporary file, synced, renamed over it,
// its folder synced), so a kill of the hub at any moment leaves either the
// old mapping or the new one.
type sessionFile struct {
	path string

	mu      sync.Mutex
	threads map[string]string // thread -> the harness's session id
}

// sessionsDoc is the file's content.
type sessionsDoc struct {
	Threads map[string]string `json:"threads"`
}

// maxSessionsFile bounds the file read: a hub's threads, each a line.
const maxSessionsFile = 64 << 20

// openSessions reads path's mapping, none when it doesn't exist yet: a
// regular file, at most maxSessionsFile bytes, never read through a link.
func openSessions(path string) (*sessionFile, error) {
	f := &sessionFile{path: path, threads: map[string]string{}}
	if path == "" {
		return f, nil
	}
	b, err := fsx.ReadLimit(path, maxSessionsFile) // never through a link, nor a pipe
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	if b == nil {
		return f, nil
	}
	var doc sessionsDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("read sessions %s: %w", path, err)
	}
	for k, v := range doc.Threads {
		f.threads[k] = v
	}
	return f, nil
}

// get is thread's session, "" for none.
func (f *sessionFile) get(thread string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.threads[thread]
}

// set keeps session as thread's, written to the file before it returns.
func (f *sessionFile) set(thread, session string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, had := f.threads[thread]
	f.threads[thread] = session
	if err := f.write(); err != nil {
		if had {
			f.threads[thread] = old
		} else {
			delete(f.threads, thread)
		}
		return err
	}
	return nil
}

// forget lets thread's session go, if it is still session: the file is
// written without it before it returns.
func (f *sessionFile) forget(thread, session string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.threads[thread] != session {
		return nil
	}
	delete(f.threads, thread)
	if err := f.write(); err != nil {
		f.threads[thread] = session
		return err
	}
	return nil
}

// write replaces the file with the mapping held; f.mu is held.
func (f *sessionFile) write() error {
	if f.path == "" {
		return nil
	}
	b, err := json.Marshal(sessionsDoc{Threads: f.threads})
	if err != nil {
		return fmt.Errorf("write sessions: %w", err)
	}
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write sessions: %w", err)
	}
	if err := fsx.Replace(f.path, append(b, '\n'), true); err != nil {
		return fmt.Errorf("write sessions %s: %w", f.path, err)
	}
	return nil
}
