package gcs

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/lnk-dev/link/store"
)

var _ store.Forgetter = (*Driver)(nil)

// Forget deletes every object of thread, its events and its lease, so a
// conversation converted away leaves nothing in the bucket. It is for
// lnk agent chat convert, which runs with the agent stopped: another
// Driver that saw the thread's events still takes their numbers as
// written until it is made anew.
func (d *Driver) Forget(ctx context.Context, thread string) error {
	folder, err := d.folder(thread)
	if err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	it := d.bucket.Objects(ctx, &storage.Query{Prefix: folder})
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return fmt.Errorf("forget %s: %w", thread, err)
		}
		err = d.bucket.Object(attrs.Name).Delete(ctx)
		if err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
			return fmt.Errorf("forget %s: delete %s: %w", thread, d.objectURL(attrs.Name), err)
		}
	}
	d.mu.Lock()
	delete(d.heads, folder)
	d.mu.Unlock()
	return nil
}
