package log

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/internal/leasefile"
)

// Lease takes the thread's lease for holder until ttl from now, or renews
// it for the holder that has it: lease.json (leasefile), under the
// conversation's lock.
func (d *Driver) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	l, err := d.lease(ctx, thread, holder, ttl)
	if err != nil {
		return store.Lease{}, fmt.Errorf("lease %s for %s: %w", thread, holder, err)
	}
	return l, nil
}

func (d *Driver) lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	c, err := d.conv(thread)
	if err != nil {
		return store.Lease{}, err
	}
	f, err := d.openLocked(ctx, c, os.O_RDWR|os.O_CREATE, exclusive)
	if err != nil {
		return store.Lease{}, err
	}
	defer f.Close()
	return leasefile.Take(c.lease, holder, ttl, d.Now())
}

// Release lets holder's lease of the thread go; a lease another holds, or
// none, is left as it is. It has the next folder made ahead, once one was
// taken (MakeAhead).
func (d *Driver) Release(ctx context.Context, thread, holder string) error {
	defer d.madeFolders()
	if err := d.release(ctx, thread, holder); err != nil {
		return fmt.Errorf("release %s for %s: %w", thread, holder, err)
	}
	return nil
}

func (d *Driver) release(ctx context.Context, thread, holder string) error {
	c, err := d.conv(thread)
	if err != nil {
		return err
	}
	f, err := d.openLocked(ctx, c, os.O_RDONLY, exclusive)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a conversation not begun has no lease
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return leasefile.Release(c.lease, holder)
}
