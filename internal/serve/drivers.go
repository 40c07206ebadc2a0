package serve

import (
	"context"
	"os"
	"path/filepath"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/sqlite"
)

// Drivers opens the ways of keeping the agent's conversations: the log
// and compact always, SQLite when its file is there (it makes the file
// when opened, so an agent that never used it gets none) or the agent's
// settings begin new conversations there.
func Drivers(p store.Paths) (map[string]store.Conversations, error) {
	out := map[string]store.Conversations{store.Log: log.Open(p.Chats()), store.Compact: compact.Open(p.Chats())}
	if _, err := os.Stat(filepath.Join(p.Chats(), sqlite.File)); err == nil || wantsSQLite(p) {
		d, err := sqlite.Open(p.Chats())
		if err != nil {
			return nil, err
		}
		out[sqlite.Name] = d
	}
	return out, nil
}

// wantsSQLite says whether the agent's settings begin new conversations
// in SQLite.
func wantsSQLite(p store.Paths) bool {
	s, err := ReadSettings(context.Background(), p, "")
	return err == nil && s.Conversations == sqlite.Name
}

// Openers opens each way on any folder, for a convert stopped midway.
func Openers(store.Paths) map[string]store.Opener {
	return map[string]store.Opener{
		store.Log:     func(chats string) (store.Conversations, error) { return log.Open(chats), nil },
		store.Compact: func(chats string) (store.Conversations, error) { return compact.Open(chats), nil },
		sqlite.Name:   func(chats string) (store.Conversations, error) { return sqlite.Open(chats) },
	}
}
