package stdioagent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
)

// Entry is one line of a session's entries file: what was said, whole.
type Entry struct {
	Role string `json:"role"` // user or agent
	Text string `json:"text"`
}

// entriesExt names a session's entries file beside its history.
const entriesExt = ".entries"

// appendEntries adds es to the entries file at path, one JSON line each.
func appendEntries(path string, es ...Entry) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	for _, e := range es {
		if e.Text == "" {
			continue
		}
		b, _ := json.Marshal(e)
		if _, err := f.Write(append(b, '\n')); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// Store reads and writes the scripted agent's own files in Dir (its
// EnvState), as an adapter's store does a harness's: a session is its
// history file (what resume and load read) and its entries file (what
// was said, whole). It is the hub's Store for the scripted agent.
type Store struct {
	Dir string
}

// Export reads session's entries; ok is false when the folder holds no
// such session.
func (s Store) Export(ctx context.Context, session string) ([]contract.StateEntry, bool, error) {
	if session == "" || strings.ContainsAny(session, `/\.`) {
		return nil, false, nil
	}
	f, err := os.Open(filepath.Join(s.Dir, session+entriesExt))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	var out []contract.StateEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, false, fmt.Errorf("session %s: %w", session, err)
		}
		out = append(out, contract.StateEntry{Role: e.Role, Text: e.Text})
	}
	return out, true, sc.Err()
}

// Import writes entries as a new session of the agent's, and returns its
// id: its history the user entries, as the agent writes them.
func (s Store) Import(ctx context.Context, entries []contract.StateEntry) (string, error) {
	id := "s-imported-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var history strings.Builder
	es := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if e.Role == contract.RoleUser {
			history.WriteString(strconv.Quote(truncate(e.Text, 200)) + "\n")
		}
		es = append(es, Entry{Role: e.Role, Text: e.Text})
	}
	if err := appendEntries(filepath.Join(s.Dir, id+entriesExt), es...); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(s.Dir, id), []byte(history.String()), 0o600); err != nil {
		return "", err
	}
	return id, nil
}
