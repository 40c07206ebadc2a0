// Package codex is the hub's store (hub.Store) for Codex behind
// codex-acp: it reads and writes Codex's own session files (its
// rollouts), so a conversation exported from another harness becomes a
// session Codex resumes and goes on from, and one of Codex's is exported
// whole without loading it.
//
// Codex keeps each session as a JSON Lines file,
// CODEX_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-ID.jsonl,
// where CODEX_HOME is $CODEX_HOME (else ~/.codex) and ID the session's
// UUID. Each line is {"timestamp", "type", "payload"}: the first a
// session_meta, then response_item lines (what the model is sent again
// on a resume) and event_msg lines (what the user saw). See
// docs/agent-state.md for what is read and written and what doesn't
// survive.
package codex

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/hub"
	"github.com/lnk-dev/link/internal/fsx"
)

var _ hub.Store = (*Store)(nil)

// Bounds of a read of Codex's files.
const (
	// MaxFile bounds a rollout, in bytes: its tool calls' output, which
	// an export passes over, may be far bigger than what was said.
	MaxFile = 256 << 20
	// MaxFind bounds the names a search for a session's rollout looks
	// at under sessions/.
	MaxFind = 200000
	// ReadTimeout bounds one session's export, its search included.
	ReadTimeout = 30 * time.Second
)

// Store reads and writes Codex's rollouts in Home, for the sessions it
// runs in Cwd.
type Store struct {
	// Home is Codex's folder: $CODEX_HOME, else ~/.codex.
	Home string
	// Cwd is the folder the hub runs Codex's sessions in (the hub's
	// Config.Dir), written into an imported session's meta.
	Cwd string
	// Now is the clock of an import (its file's name, entries with no
	// time); nil is time.Now.
	Now func() time.Time
}

// Home is Codex's folder in env, as codex-acp finds it: $CODEX_HOME,
// else $HOME/.codex.
func Home(env map[string]string) (string, error) {
	return hub.AgentDir(env, "CODEX_HOME", ".codex")
}

// sessions is Home's sessions/ folder: an error when it is a symbolic
// link, never followed out of Home.
func (s *Store) sessions() (string, error) {
	if s.Home == "" || s.Cwd == "" {
		return "", errors.New("codex store: no home or cwd")
	}
	dir := filepath.Join(s.Home, "sessions")
	if info, err := os.Lstat(dir); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("codex store: %s is %w", dir, fsx.ErrSymlink)
	}
	return dir, nil
}

// errFound ends find's walk.
var errFound = errors.New("found")

// find is the rollout of session under dir (YYYY/MM/DD, links neither
// followed nor taken), "" when there is none; at most MaxFind names are
// looked at.
func find(ctx context.Context, dir, session string) (string, error) {
	suffix := "-" + strings.ToLower(session) + ".jsonl"
	found, seen := "", 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if seen++; seen > MaxFind {
			return fmt.Errorf("over the %d names a search for a session looks at", MaxFind)
		}
		if seen%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		depth := strings.Count(strings.TrimPrefix(p, dir), string(filepath.Separator))
		if d.IsDir() {
			if depth > 3 {
				return fs.SkipDir
			}
			return nil
		}
		if depth == 4 && d.Type().IsRegular() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(strings.ToLower(d.Name()), suffix) {
			found = p
			return errFound
		}
		return nil
	})
	if err != nil && err != errFound {
		return "", err
	}
	return found, nil
}

// Export reads what was said in session from its rollout; ok is false
// when Codex keeps none (the hub then replays it).
func (s *Store) Export(ctx context.Context, session string) ([]contract.StateEntry, bool, error) {
	if !hub.IsUUID(session) {
		return nil, false, nil
	}
	dir, err := s.sessions()
	if err != nil {
		return nil, false, err
	}
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	name, err := find(ctx, dir, session)
	if err != nil {
		return nil, false, fmt.Errorf("codex session %s: %w", session, err)
	}
	if name == "" {
		return nil, false, nil
	}
	f, err := fsx.Open(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, false, fmt.Errorf("codex session %s: %w", session, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if info.Size() > MaxFile {
		return nil, false, fmt.Errorf("codex session %s: its file holds %d bytes, over the %d read", session, info.Size(), MaxFile)
	}
	entries, err := Parse(ctx, f, MaxFile)
	if err != nil {
		return nil, false, fmt.Errorf("codex session %s: %w", session, err)
	}
	return entries, true, nil
}

// Import writes entries as a new session of Codex's, one its
// session/resume takes up, and returns its id. The rollout is written
// whole (a temporary file renamed, synced), never over one already there.
func (s *Store) Import(ctx context.Context, entries []contract.StateEntry) (string, error) {
	dir, err := s.sessions()
	if err != nil {
		return "", err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	t := now().UTC()
	session := newUUIDv7(t)
	day := filepath.Join(dir, t.Format("2006"), t.Format("01"), t.Format("02"))
	if err := noLinks(dir, day); err != nil {
		return "", err
	}
	if err := os.MkdirAll(day, 0o700); err != nil {
		return "", fmt.Errorf("codex store: %w", err)
	}
	if err := noLinks(dir, day); err != nil { // made meanwhile as a link
		return "", err
	}
	b, err := Write(entries, session, s.Cwd, t)
	if err != nil {
		return "", err
	}
	name := filepath.Join(day, "rollout-"+t.Format("2006-01-02T15-04-05")+"-"+session+".jsonl")
	if _, err := os.Lstat(name); err == nil {
		return "", fmt.Errorf("codex session %s: already there", session)
	}
	if err := fsx.Replace(name, b, true); err != nil {
		return "", fmt.Errorf("codex session %s: %w", session, err)
	}
	return session, nil
}

// noLinks refuses day's folders up to sessions/ (dir) when one that is
// there is a symbolic link.
func noLinks(dir, day string) error {
	for d := day; d != filepath.Dir(dir); d = filepath.Dir(d) {
		info, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("codex store: %w", err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("codex store: %s is %w", d, fsx.ErrSymlink)
		}
	}
	return nil
}

// newUUIDv7 is a time-ordered (version 7) UUID for t, as Codex names
// its sessions.
func newUUIDv7(t time.Time) string {
	var b [16]byte
	rand.Read(b[:])
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(t.UnixMilli()))
	copy(b[0:6], ms[2:8])
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
