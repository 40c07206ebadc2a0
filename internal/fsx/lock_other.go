//go:build !unix

package fsx

import "context"

// LockDir orders writers of a folder within this process only, where the
// system has no flock: its callers' own mutexes do that already.
func LockDir(ctx context.Context, dir string) (unlock func(), err error) {
	return func() {}, ctx.Err()
}
