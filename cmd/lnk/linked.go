package main

import (
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/sqlite"
)

// linkedDrivers are the store drivers lnk links, which the harness lnk
// agent chat starts runs in its own process; gcs, for which it has no
// bucket of its own, it runs as lnk-link-harness does, behind the store
// bridge in a child (internal/serve.Ways).
func linkedDrivers() map[string]store.Opener {
	return map[string]store.Opener{
		sqlite.Name: func(chats string) (store.Conversations, error) { return sqlite.Open(chats) },
	}
}
