package compact

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

// Lease takes thread's lease for holder, or renews it, until now+ttl:
// lease.json (leasefile), under the conversation's lock; another holder's
// that hasn't expired is ErrLeaseHeld. A conversation not begun is begun,
// so its folder says it is compact from its first turn.
func (d *Driver) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	l, err := d.lease(ctx, thread, holder, ttl)
	if err != nil {
		return store.Lease{}, fmt.Errorf("lease %s for %s: %w", thread, holder, err)
	}
	return l, nil
}

func (d *Driver) lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	if err := ctx.Err(); err != nil {
		return store.Lease{}, err
	}
	dir, err := d.dir(thread)
	if err != nil {
		return store.Lease{}, err
	}
	if holder == "" {
		return store.Lease{}, errors.New("a lease has a holder")
	}
	c, err := d.openWriter(ctx, dir, thread)
	if err != nil {
		return store.Lease{}, err
	}
	defer c.close()
	return leasefile.Take(fsx.Join(dir, leasefile.File), holder, ttl, d.now())
}

// Release lets holder's lease of thread go; it is no error if holder
// doesn't have it.
func (d *Driver) Release(ctx context.Context, thread, holder string) error {
	if err := d.release(ctx, thread, holder); err != nil {
		return fmt.Errorf("release %s by %s: %w", thread, holder, err)
	}
	return nil
}

func (d *Driver) release(ctx context.Context, thread, holder string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, err := d.dir(thread)
	if err != nil {
		return err
	}
	// Opened for its lock alone: a File, without an *os.File's costs.
	tail, err := fsx.OpenFile(fsx.Join(dir, tailName), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // never begun, so never leased
	}
	if err != nil {
		return err
	}
	defer tail.Close()
	if err := fsx.Lock(ctx, tail, true); err != nil {
		return err
	}
	return leasefile.Release(fsx.Join(dir, leasefile.File), holder)
}
