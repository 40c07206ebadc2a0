// Package gemini is the hub's store (hub.Store) for Gemini CLI behind
// gemini --acp: it reads and writes Gemini CLI's own chat files, so a
// conversation exported from another harness becomes a session Gemini
// loads and goes on from, one of Gemini's is exported whole without
// loading it, and the sessions the hub keeps are readied before each
// start of Gemini so that Gemini's own load and cleanup don't lose them
// (PrepareStart).
//
// Gemini CLI 0.61.0 keeps each session as a JSON Lines file,
// GEMINI/tmp/SLUG/chats/session-YYYY-MM-DDThh-mm-ID8.jsonl, where
// GEMINI is $GEMINI_CLI_HOME/.gemini (else ~/.gemini), SLUG is the
// project's short name (GEMINI/projects.json maps each folder to one,
// and GEMINI/tmp/SLUG/.project_root names its folder), the time is the
// minute the file was made (UTC) and ID8 the first 8 characters of the
// session's UUID. Its first line is the session's metadata (sessionId,
// projectHash, startTime, lastUpdated, kind); each later line is a
// message (id, timestamp, type user or gemini, content), a
// {"$set": {...}} of metadata (whose "messages", when there, replace
// all the messages before it) or a {"$rewindTo": ID}. See
// docs/agent-state.md for what is read and written and what doesn't
// survive.
package gemini

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/hub"
	"github.com/lnk-dev/link/internal/fsx"
)

var (
	_ hub.Store    = (*Store)(nil)
	_ hub.Preparer = (*Store)(nil)
)

// Bounds of a read of Gemini CLI's files.
const (
	// MaxFile bounds a chat file, in bytes: its tool calls' output, which
	// an export passes over, may be far bigger than what was said.
	MaxFile = 256 << 20
	// MaxNames bounds the names looked at in a chats folder, or among
	// the projects' folders.
	MaxNames = 100000
	// MaxRegistry bounds GEMINI/projects.json and a .project_root file.
	MaxRegistry = 4 << 20
	// ReadTimeout bounds one session's export or readying.
	ReadTimeout = 30 * time.Second
)

// Store reads and writes Gemini CLI's chat files in Dir, for the
// sessions it runs in Cwd.
type Store struct {
	// Dir is Gemini CLI's folder: $GEMINI_CLI_HOME/.gemini, else
	// ~/.gemini.
	Dir string
	// Cwd is the folder the hub runs Gemini's sessions in (the hub's
	// Config.Dir), the project whose chats these are.
	Cwd string
	// Now is the clock of an import (its file's name, entries with no
	// time); nil is time.Now.
	Now func() time.Time
}

// Dir is Gemini CLI's folder in env, as gemini finds it:
// $GEMINI_CLI_HOME/.gemini, else $HOME/.gemini.
func Dir(env map[string]string) (string, error) {
	if h := env["GEMINI_CLI_HOME"]; h != "" {
		h, err := filepath.Abs(h)
		return filepath.Join(h, ".gemini"), err
	}
	return hub.AgentDir(env, "", ".gemini")
}

// geminiName is the name Gemini CLI gives a session's chat file: the
// minute it was made and the session's first 8 characters.
var geminiName = regexp.MustCompile(`^session-(\d{4}-\d\d-\d\dT\d\d-\d\d)-([0-9a-f]{8})\.jsonl$`)

// short is the first 8 characters of session, as a chat file's name has
// them.
func short(session string) string { return strings.ToLower(session[:8]) }

// chats is the chats folder of the project Cwd is, "" when Gemini has
// none yet; with claim, one is made when there is none, as Gemini would
// make it. A symbolic link on the way is refused, never followed out of
// Dir.
func (s *Store) chats(ctx context.Context, claim bool) (string, error) {
	if s.Dir == "" || s.Cwd == "" {
		return "", errors.New("gemini store: no folder or cwd")
	}
	tmp := filepath.Join(s.Dir, "tmp")
	if err := noLink(s.Dir, tmp); err != nil {
		return "", err
	}
	slug, err := s.slug(ctx, tmp)
	if err != nil {
		return "", err
	}
	if slug == "" {
		if !claim {
			return "", nil
		}
		if slug, err = s.claim(tmp); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(tmp, slug, "chats")
	if err := noLink(filepath.Join(tmp, slug), dir); err != nil {
		return "", err
	}
	return dir, nil
}

// noLink refuses each of dirs that is there as a symbolic link.
func noLink(dirs ...string) error {
	for _, d := range dirs {
		info, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("gemini store: %w", err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("gemini store: %s is %w", d, fsx.ErrSymlink)
		}
	}
	return nil
}

// validSlug is a project's short name as Gemini's registry takes it.
var validSlug = regexp.MustCompile(`^[a-z0-9-]{1,200}$`)

// slug is the short name of the project Cwd is, as Gemini finds it: the
// registry's, when its .project_root names Cwd, else the first folder of
// tmp whose .project_root does; "" for none.
func (s *Store) slug(ctx context.Context, tmp string) (string, error) {
	cwd := filepath.Clean(s.Cwd)
	b, err := fsx.ReadLimit(filepath.Join(s.Dir, "projects.json"), MaxRegistry)
	if err != nil && !errors.Is(err, fsx.ErrSymlink) {
		return "", fmt.Errorf("gemini store: %w", err)
	}
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if json.Unmarshal(b, &reg) == nil {
		if slug := reg.Projects[cwd]; validSlug.MatchString(slug) && s.owns(tmp, slug) {
			return slug, nil
		}
	}
	names, err := readNames(tmp)
	if err != nil {
		return "", err
	}
	for i, name := range names {
		if i%256 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		if validSlug.MatchString(name) && s.owns(tmp, name) {
			return name, nil
		}
	}
	return "", nil
}

// owns says whether tmp/slug/.project_root names Cwd.
func (s *Store) owns(tmp, slug string) bool {
	b, err := fsx.ReadLimit(filepath.Join(tmp, slug, ".project_root"), MaxRegistry)
	return err == nil && b != nil && strings.TrimSpace(string(b)) == filepath.Clean(s.Cwd)
}

// readNames is the names in dir, at most MaxNames; none when there is no
// dir.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gemini store: %w", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(MaxNames + 1)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("gemini store: %w", err)
	}
	if len(names) > MaxNames {
		return nil, fmt.Errorf("gemini store: %s holds over the %d names looked at", dir, MaxNames)
	}
	return names, nil
}

// claim makes the project folder of Cwd under tmp, named as Gemini names
// one (its base name, lower case, each run of other characters "-",
// then -1, -2... for one taken), with its .project_root; Gemini finds it
// there and puts it in its registry when it next starts a session.
func (s *Store) claim(tmp string) (string, error) {
	cwd := filepath.Clean(s.Cwd)
	base := regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(filepath.Base(cwd)), "-")
	base = strings.Trim(base, "-")
	if base == "" {
		base = "project"
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", fmt.Errorf("gemini store: %w", err)
	}
	for n := 0; n < 1000; n++ {
		slug := base
		if n > 0 {
			slug += "-" + strconv.Itoa(n)
		}
		dir := filepath.Join(tmp, slug)
		if err := os.Mkdir(dir, 0o700); errors.Is(err, fs.ErrExist) {
			if s.owns(tmp, slug) {
				return slug, nil
			}
			continue
		} else if err != nil {
			return "", fmt.Errorf("gemini store: %w", err)
		}
		f, err := fsx.Open(filepath.Join(dir, ".project_root"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", fmt.Errorf("gemini store: %w", err)
		}
		_, err = f.WriteString(cwd)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("gemini store: %w", err)
		}
		return slug, nil
	}
	return "", fmt.Errorf("gemini store: no free project folder for %s in %s", cwd, tmp)
}

// files are the chat files in dir that may be session's: named by its
// first 8 characters, regular files (links passed over).
func files(dir, session string) ([]string, error) {
	names, err := readNames(dir)
	if err != nil {
		return nil, err
	}
	suffix := "-" + short(session) + ".jsonl"
	var out []string
	for _, name := range names {
		if !strings.HasPrefix(name, "session-") || !strings.HasSuffix(strings.ToLower(name), suffix) {
			continue
		}
		if info, err := os.Lstat(filepath.Join(dir, name)); err == nil && info.Mode().IsRegular() {
			out = append(out, name)
		}
	}
	return out, nil
}

// Export reads what was said in session from its chat file (the latest
// updated of those holding what it said, as Gemini picks); ok is false
// when Gemini keeps none (the hub then replays it).
func (s *Store) Export(ctx context.Context, session string) ([]contract.StateEntry, bool, error) {
	if !hub.IsUUID(session) {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	dir, err := s.chats(ctx, false)
	if err != nil || dir == "" {
		return nil, false, err
	}
	names, err := files(dir, session)
	if err != nil {
		return nil, false, err
	}
	var best *Chat
	for _, name := range names {
		c, err := readChat(ctx, filepath.Join(dir, name))
		if err != nil {
			return nil, false, fmt.Errorf("gemini session %s: %s: %w", session, name, err)
		}
		if c.SessionID != session || len(c.Entries) == 0 {
			continue
		}
		if best == nil || c.LastUpdated > best.LastUpdated {
			best = &c
		}
	}
	if best == nil {
		return nil, false, nil
	}
	return best.Entries, true, nil
}

// readChat parses the chat file name, at most MaxFile bytes.
func readChat(ctx context.Context, name string) (Chat, error) {
	f, err := fsx.Open(name, os.O_RDONLY, 0)
	if err != nil {
		return Chat{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Chat{}, err
	}
	if info.Size() > MaxFile {
		return Chat{}, fmt.Errorf("its file holds %d bytes, over the %d read", info.Size(), MaxFile)
	}
	return Parse(ctx, f, MaxFile)
}

// PrepareStart readies the chat files of sessions (those the hub keeps)
// before Gemini CLI starts, against two ways Gemini CLI 0.61.0 loses a
// session loaded over ACP:
//
//   - Its session/load first records a fresh chat of the session under
//     session-NOW-ID8.jsonl, then reads the session's files. When the
//     session's own file was made in that minute, it is the one
//     appended to, and the fresh chat's first lines replace what it
//     holds as Gemini reads it: the load answers "No previous sessions
//     found for this project". So a session's file with a name Gemini
//     makes (session-MINUTE-ID8.jsonl) is renamed to the same name with
//     the seconds "00" after the minute, a name Gemini never makes but
//     reads as it reads its own.
//   - That fresh chat is left holding nothing said, and at its next
//     start Gemini's session cleanup (on by default) deletes such a file
//     and, with it, every other file of the same ID8: the session is
//     gone after the second restart. So a file of the session holding
//     nothing said is removed, when another of its files holds what was
//     said.
//
// A file that can't be read is left as it is, and the first such error
// returned once the others are done. Only a session with more than one
// file has them read.
func (s *Store) PrepareStart(ctx context.Context, sessions []string) error {
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	dir, err := s.chats(ctx, false)
	if err != nil || dir == "" {
		return err
	}
	names, err := readNames(dir)
	if err != nil {
		return err
	}
	byShort := map[string][]string{} // ID8 -> the names ending in it
	for _, name := range names {
		if m := shortName.FindStringSubmatch(name); m != nil {
			byShort[m[1]] = append(byShort[m[1]], name)
		}
	}
	var first error
	for _, session := range sessions {
		if !hub.IsUUID(session) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.prepare(ctx, dir, session, byShort[short(session)]); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// shortName finds a chat file's ID8 in its name.
var shortName = regexp.MustCompile(`^session-.*-([0-9a-f]{8})\.jsonl$`)

// prepare readies session's files among names, in dir. A session of one
// file (as most are) has it renamed unread: only one of several may be
// the empty fresh chat.
func (s *Store) prepare(ctx context.Context, dir, session string, names []string) error {
	var first error
	var said, empty []string
	if len(names) == 1 {
		said = names
		names = nil
	}
	for _, name := range names {
		p := filepath.Join(dir, name)
		if info, err := os.Lstat(p); err != nil || !info.Mode().IsRegular() {
			continue
		}
		c, err := readChat(ctx, p)
		if err != nil {
			if first == nil {
				first = fmt.Errorf("gemini session %s: %s: %w", session, name, err)
			}
			continue
		}
		if c.SessionID != session {
			continue
		}
		if c.Resumable {
			said = append(said, name)
		} else {
			empty = append(empty, name)
		}
	}
	if len(said) > 0 {
		for _, name := range empty {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && first == nil {
				first = fmt.Errorf("gemini session %s: %w", session, err)
			}
		}
	}
	for _, name := range said {
		m := geminiName.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		to := filepath.Join(dir, "session-"+m[1]+"-00-"+m[2]+".jsonl")
		if _, err := os.Lstat(to); err == nil {
			continue
		}
		if err := os.Rename(filepath.Join(dir, name), to); err != nil && first == nil {
			first = fmt.Errorf("gemini session %s: %w", session, err)
		}
	}
	return first
}

// Import writes entries as a new session of Gemini's, one its
// session/load takes up, and returns its id. The chat file is written
// whole (a temporary file renamed, synced), never over one already
// there, under a name Gemini never makes (its time has seconds), so no
// load of Gemini's appends to it.
func (s *Store) Import(ctx context.Context, entries []contract.StateEntry) (string, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	t := now().UTC()
	dir, err := s.chats(ctx, true)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("gemini store: %w", err)
	}
	if err := noLink(dir); err != nil { // made meanwhile as a link
		return "", err
	}
	session := newUUID()
	b, err := Write(entries, session, filepath.Clean(s.Cwd), t)
	if err != nil {
		return "", err
	}
	name := filepath.Join(dir, "session-"+t.Format("2006-01-02T15-04-05")+"-"+short(session)+".jsonl")
	if _, err := os.Lstat(name); err == nil {
		return "", fmt.Errorf("gemini session %s: already there", session)
	}
	if err := fsx.Replace(name, b, true); err != nil {
		return "", fmt.Errorf("gemini session %s: %w", session, err)
	}
	return session, nil
}

// newUUID is a random (version 4) UUID, as Gemini names its sessions.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
