package log

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/internal/leasefile"
)

var _ store.LeaseReader = (*Driver)(nil)

// Lease takes the thread's lease for holder until ttl from now, or renews
// it for the holder that has it: lease.json (leasefile), under the
// conversation's lock.
func (d *Driver) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	l, _, err := d.leaseRead(ctx, thread, holder, ttl, nil)
	return l, err
}

// LeaseRead takes the lease as Lease does and, with the conversation's
// file still open under its lock, reads its events from from as Read
// does: one open of events.jsonl for both. A read that fails lets the
// lease go again: the call took nothing.
func (d *Driver) LeaseRead(ctx context.Context, thread, holder string, ttl time.Duration, from int64) (store.Lease, []store.Event, error) {
	return d.leaseRead(ctx, thread, holder, ttl, &from)
}

// leaseRead is Lease, and LeaseRead when from is not nil.
func (d *Driver) leaseRead(ctx context.Context, thread, holder string, ttl time.Duration, from *int64) (store.Lease, []store.Event, error) {
	c, f, err := d.locked(ctx, thread, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return store.Lease{}, nil, fmt.Errorf("lease %s for %s: %w", thread, holder, err)
	}
	defer f.Close()
	l, err := leasefile.Take(c.lease, holder, ttl, d.Now())
	if err != nil {
		return store.Lease{}, nil, fmt.Errorf("lease %s for %s: %w", thread, holder, err)
	}
	if from == nil {
		return l, nil, nil
	}
	es, err := c.readFrom(f, *from)
	if err != nil {
		err = fmt.Errorf("read %s: %w", thread, err)
		if rerr := leasefile.Release(c.lease, holder); rerr != nil {
			err = errors.Join(err, fmt.Errorf("release %s for %s: %w", thread, holder, rerr))
		}
		return store.Lease{}, nil, err
	}
	return l, es, nil
}

// Release lets holder's lease of the thread go; a lease another holds, or
// none, is left as it is. It has the next folder made ahead, once one was
// taken (MakeAhead).
func (d *Driver) Release(ctx context.Context, thread, holder string) error {
	_, err := d.releaseRead(ctx, thread, holder, nil)
	return err
}

// ReleaseRead lets the lease go as Release does and, with the
// conversation's file still open under its lock, reads its events from
// from as Read does: one open of events.jsonl for both.
func (d *Driver) ReleaseRead(ctx context.Context, thread, holder string, from int64) ([]store.Event, error) {
	return d.releaseRead(ctx, thread, holder, &from)
}

// releaseRead is Release, and ReleaseRead when from is not nil.
func (d *Driver) releaseRead(ctx context.Context, thread, holder string, from *int64) ([]store.Event, error) {
	defer d.madeFolders()
	c, f, err := d.locked(ctx, thread, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // a conversation not begun has no lease, and no events
	}
	if err != nil {
		return nil, fmt.Errorf("release %s for %s: %w", thread, holder, err)
	}
	defer f.Close()
	if err := leasefile.Release(c.lease, holder); err != nil {
		return nil, fmt.Errorf("release %s for %s: %w", thread, holder, err)
	}
	if from == nil {
		return nil, nil
	}
	es, err := c.readFrom(f, *from)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	return es, nil
}

// locked is the thread's conversation and its events.jsonl opened with
// flag under its exclusive lock, as a lease's calls take it.
func (d *Driver) locked(ctx context.Context, thread string, flag int) (*conv, *fsx.File, error) {
	c, err := d.conv(thread)
	if err != nil {
		return nil, nil, err
	}
	f, err := d.openLocked(ctx, c, flag, exclusive)
	return c, f, err
}
