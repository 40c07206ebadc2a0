//go:build !unix

package store

import "context"

// lockDir orders writers of a folder within this process only, where the
// system has no flock: Folders' own mutex does that already.
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	return func() {}, ctx.Err()
}
