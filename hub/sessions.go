package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
)

// sessionFile keeps which of the harness's sessions is each thread's, in
// one JSON file written whole (a temporary file, synced, renamed over it,
// its folder synced), so a kill of the hub at any moment leaves either the
// old mapping or the new one.
type sessionFile struct {
	path string

	mu      sync.Mutex
	threads map[string]string // thread -> the harness's session id; "" for one let go
	models  map[string]string // session id -> the model a prompt set it to
	lost    string            // when a file that didn't read was set aside; "" if never
}

// sessionsDoc is the file's content.
type sessionsDoc struct {
	Threads map[string]string `json:"threads"`
	// Lost is when a sessions.json that didn't read was set aside: a
	// thread the file doesn't name may have had a session then, and is
	// told it starts anew (resetNote) as its new one is made.
	Lost string `json:"lost,omitempty"`
	// Models are the models prompts set sessions to through the agent's
	// model picker (useModel), by session, set again should a session
	// taken up after a restart run on another.
	Models map[string]string `json:"models,omitempty"`
}

// maxSessionsFile bounds the file read: a hub's threads, each a line.
const maxSessionsFile = 64 << 20

// openSessions reads path's mapping, none when it doesn't exist yet: a
// regular file, at most maxSessionsFile bytes, never read through a link.
// One that doesn't read (cut short, not JSON, past the bound) is set
// aside as path.corrupt-<time> (fsx.SetAside), said once in log, and the
// hub goes on with no thread's session, each told so at its next message;
// one that isn't a regular file is refused.
func openSessions(path string, log *slog.Logger, now time.Time) (*sessionFile, error) {
	f := &sessionFile{path: path, threads: map[string]string{}, models: map[string]string{}}
	if path == "" {
		return f, nil
	}
	b, err := fsx.ReadLimit(path, maxSessionsFile) // never through a link, nor a pipe
	if errors.Is(err, fsx.ErrTooBig) {
		return f, f.setAside(err, log, now)
	}
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	if b == nil {
		return f, nil
	}
	var doc sessionsDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return f, f.setAside(err, log, now)
	}
	for k, v := range doc.Threads {
		f.threads[k] = v
	}
	for k, v := range doc.Models {
		f.models[k] = v
	}
	f.lost = doc.Lost
	return f, nil
}

// setAside sets the file that didn't read (why) aside, says so in log,
// and writes the file anew, empty, saying when its sessions were lost.
func (f *sessionFile) setAside(why error, log *slog.Logger, now time.Time) error {
	aside, err := fsx.SetAside(f.path, now)
	if err != nil {
		return fmt.Errorf("read sessions %s: %v; it could not be set aside: %w", f.path, why, err)
	}
	log.Warn("set aside a sessions.json that doesn't read: every thread starts a new session, told so", "file", aside, "err", why.Error())
	f.lost = now.UTC().Format(time.RFC3339)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.write()
}

// get is thread's session, "" for none.
func (f *sessionFile) get(thread string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.threads[thread]
}

// lostTo says whether thread may have had a session lost with a file set
// aside: one was, and the file names no session of thread's since.
func (f *sessionFile) lostTo(thread string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, known := f.threads[thread]
	return f.lost != "" && !known
}

// set keeps session as thread's, written to the file before it returns.
func (f *sessionFile) set(thread, session string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, had := f.threads[thread]
	f.threads[thread] = session
	model, hadModel := f.models[old]
	if old != session {
		delete(f.models, old) // the session replaced runs no more
	}
	if err := f.write(); err != nil {
		if had {
			f.threads[thread] = old
		} else {
			delete(f.threads, thread)
		}
		if hadModel {
			f.models[old] = model
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
	f.threads[thread] = "" // known: its next session is no loss
	model, had := f.models[session]
	delete(f.models, session)
	if err := f.write(); err != nil {
		f.threads[thread] = session
		if had {
			f.models[session] = model
		}
		return err
	}
	return nil
}

// model is the model kept for session, "" for none.
func (f *sessionFile) model(session string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.models[session]
}

// setModel keeps model as session's, written to the file before it
// returns when it changed.
func (f *sessionFile) setModel(session, model string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, had := f.models[session]
	if old == model {
		return nil
	}
	f.models[session] = model
	if err := f.write(); err != nil {
		if had {
			f.models[session] = old
		} else {
			delete(f.models, session)
		}
		return err
	}
	return nil
}

// write replaces the file with the mapping held; f.mu is held.
func (f *sessionFile) write() error {
	if f.path == "" {
		return nil
	}
	b, err := json.Marshal(sessionsDoc{Threads: f.threads, Lost: f.lost, Models: f.models})
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
