// Package claudecode is the hub's store (hub.Store) for Claude Code
// behind claude-agent-acp: it reads and writes Claude Code's own session
// files, so a conversation exported from another harness becomes a
// session Claude Code resumes and goes on from, and one of Claude Code's
// is exported whole without loading it.
//
// Claude Code keeps each session as a JSON Lines file,
// CONFIG/projects/SLUG/SESSION.jsonl, where CONFIG is $CLAUDE_CONFIG_DIR
// (else ~/.claude) and SLUG is the session's folder (its cwd, links
// resolved) with every character but a-z, A-Z and 0-9 made "-". Each
// line is an object with a "type"; those of type "user" and "assistant"
// carry a "message" as the Anthropic API has it, each linked to the one
// before by "parentUuid". See docs/agent-state.md for what is read and
// written and what doesn't survive.
package claudecode

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/hub"
	"github.com/lnk-dev/link/internal/fsx"
)

var _ hub.Store = (*Store)(nil)

// Bounds of a read of Claude Code's files.
const (
	// MaxFile bounds a session file, in bytes: its tool calls' inputs and
	// answers, which an export passes over, may be far bigger than what
	// was said.
	MaxFile = 256 << 20
	// ReadTimeout bounds one session's export.
	ReadTimeout = 30 * time.Second
)

// Store reads and writes Claude Code's session files in ConfigDir, for
// the sessions it runs in Cwd.
type Store struct {
	// ConfigDir is Claude Code's folder: $CLAUDE_CONFIG_DIR, else
	// ~/.claude.
	ConfigDir string
	// Cwd is the folder the hub runs Claude Code's sessions in (the hub's
	// Config.Dir), whose slug names their files' folder.
	Cwd string
	// Now is the clock of an import's entries that have no time; nil is
	// time.Now.
	Now func() time.Time
}

// ConfigDir is Claude Code's folder in env, as claude-agent-acp finds
// it: $CLAUDE_CONFIG_DIR, else $HOME/.claude.
func ConfigDir(env map[string]string) (string, error) {
	return hub.AgentDir(env, "CLAUDE_CONFIG_DIR", ".claude")
}

// folder is the folder of the sessions run in s.Cwd, and whether it may
// be made: an error when it or projects/ is a symbolic link, which is
// never followed out of ConfigDir.
func (s *Store) folder() (string, error) {
	if s.ConfigDir == "" || s.Cwd == "" {
		return "", errors.New("claude code store: no config folder or cwd")
	}
	cwd := s.Cwd
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real // as Claude Code names it (realpath)
	}
	projects := filepath.Join(s.ConfigDir, "projects")
	dir := filepath.Join(projects, Slug(cwd))
	for _, d := range []string{projects, dir} {
		info, err := os.Lstat(d)
		if err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("claude code store: %s is %w", d, fsx.ErrSymlink)
		}
		if err == nil && !info.IsDir() {
			return "", fmt.Errorf("claude code store: %s is not a folder", d)
		}
	}
	return dir, nil
}

// Export reads what was said in session from its file; ok is false when
// Claude Code keeps no such file for s.Cwd (the hub then replays it).
func (s *Store) Export(ctx context.Context, session string) ([]contract.StateEntry, bool, error) {
	if !hub.IsUUID(session) {
		return nil, false, nil
	}
	dir, err := s.folder()
	if err != nil {
		return nil, false, err
	}
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	name := filepath.Join(dir, session+".jsonl")
	f, err := fsx.Open(name, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("claude code session %s: %w", session, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !info.Mode().IsRegular() {
		return nil, false, fmt.Errorf("claude code session %s: not a regular file", session)
	}
	if info.Size() > MaxFile {
		return nil, false, fmt.Errorf("claude code session %s: its file holds %d bytes, over the %d read", session, info.Size(), MaxFile)
	}
	entries, err := Parse(ctx, f, MaxFile)
	if err != nil {
		return nil, false, fmt.Errorf("claude code session %s: %w", session, err)
	}
	return entries, true, nil
}

// Import writes entries as a new session of Claude Code's in s.Cwd's
// folder, one its session/resume takes up, and returns its id. The file
// is written whole (a temporary file renamed, synced), never over one
// already there.
func (s *Store) Import(ctx context.Context, entries []contract.StateEntry) (string, error) {
	dir, err := s.folder()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("claude code store: %w", err)
	}
	if _, err := s.folder(); err != nil { // made meanwhile as a link
		return "", err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	session := newUUID()
	b, err := Write(entries, session, s.Cwd, now())
	if err != nil {
		return "", err
	}
	name := filepath.Join(dir, session+".jsonl")
	if _, err := os.Lstat(name); err == nil {
		return "", fmt.Errorf("claude code session %s: already there", session)
	}
	if err := fsx.Replace(name, b, true); err != nil {
		return "", fmt.Errorf("claude code session %s: %w", session, err)
	}
	return session, nil
}

// newUUID is a random (version 4) UUID, as Claude Code names sessions
// and lines.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// maxSlug is how long a slug Claude Code keeps whole; a longer one is
// cut there and its path's hash added.
const maxSlug = 200

// Slug is the name of the folder under projects/ that Claude Code keeps
// the sessions run in cwd in: every character but a-z, A-Z and 0-9 made
// "-" (one for each UTF-16 unit, as JavaScript's replace counts them);
// over 200, the first 200 and "-" and the path's hash in base 36 (the
// JavaScript string hash Node's Claude Code uses).
func Slug(cwd string) string {
	out := make([]byte, 0, len(cwd))
	var hash int32
	for _, r := range cwd {
		units := []rune{r}
		if r > 0xFFFF {
			r -= 0x10000
			units = []rune{0xD800 + r>>10, 0xDC00 + r&0x3FF}
		}
		for _, u := range units {
			hash = hash<<5 - hash + int32(u)
			if u < 0x80 && ('a' <= u && u <= 'z' || 'A' <= u && u <= 'Z' || '0' <= u && u <= '9') {
				out = append(out, byte(u))
			} else {
				out = append(out, '-')
			}
		}
	}
	if len(out) <= maxSlug {
		return string(out)
	}
	h := int64(hash)
	if h < 0 {
		h = -h
	}
	return string(out[:maxSlug]) + "-" + strconv.FormatInt(h, 36)
}
