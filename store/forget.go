package store

import "context"

// Forgetter is the optional capability of a driver that keeps events
// outside a conversation's folder (SQLite's file, a bucket) of forgetting
// a thread: its events and its lease, so a conversation converted away
// leaves none of its rows behind, and one converted back begins anew.
// Forgetting a thread it keeps nothing of is not an error; one that
// can't forget at all (a store bridge's, serving a driver without it)
// returns errors.ErrUnsupported.
type Forgetter interface {
	Forget(ctx context.Context, thread string) error
}
