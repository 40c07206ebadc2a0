// Package main is the lnk-sqlite command, the SQLite driver's plugin: it keeps an agent's
// conversations in chats/events.sqlite, serving them behind the store
// bridge to the Link Harness or lnk that starts it (spec: "Link's first is
// SQLite (lnk-sqlite)").
//
//	lnk-sqlite serve --key-file FILE (--socket PATH | --listen 127.0.0.1:PORT) [--home DIR] [--agent NAME]
package main

import (
	"context"

	"github.com/lnk-dev/link/cmd/internal/drivers"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/sqlite"
)

func main() { plugin.Main() }

// plugin opens SQLite on the agent's conversations folder.
var plugin = drivers.Plugin{
	Name: sqlite.Name,
	Open: func(_ context.Context, p store.Paths, _ map[string]string) (store.Conversations, error) {
		return sqlite.Open(p.Chats())
	},
}
