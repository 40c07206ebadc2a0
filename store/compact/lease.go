package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// Lease takes thread's lease for holder, or renews it, until now+ttl,
// under the conversation's lock; another holder's that hasn't expired is
// ErrLeaseHeld. A conversation not begun is begun, so its folder says it
// is compact from its first turn.
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
	now := d.now()
	cur, err := readLease(dir)
	if err != nil {
		return store.Lease{}, err
	}
	l, err := store.Grant(cur, holder, ttl, now)
	if err != nil {
		return store.Lease{}, err
	}
	if err := writeLease(dir, l); err != nil {
		return store.Lease{}, err
	}
	return l, nil
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
	tail, err := os.Open(filepath.Join(dir, tailName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // never begun, so never leased
	}
	if err != nil {
		return err
	}
	defer tail.Close()
	if err := lock(ctx, tail, true); err != nil {
		return fmt.Errorf("lock %s: %w", tail.Name(), err)
	}
	cur, err := readLease(dir)
	if err != nil || cur.Holder != holder {
		return err
	}
	if err := os.Remove(filepath.Join(dir, leaseName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// readLease reads dir's lease; none is the zero Lease.
func readLease(dir string) (store.Lease, error) {
	path := filepath.Join(dir, leaseName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return store.Lease{}, nil
	}
	if err != nil {
		return store.Lease{}, err
	}
	var l store.Lease
	if err := json.Unmarshal(b, &l); err != nil {
		return store.Lease{}, fmt.Errorf("%s: %w: %v", path, store.ErrCorrupt, err)
	}
	return l, nil
}

// writeLease writes dir's lease whole beside it and renames it into
// place, so a reader finds the old lease or the new, never part of one.
func writeLease(dir string, l store.Lease) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	tmp, err := writeTemp(dir, leaseName, b)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Rename(tmp, filepath.Join(dir, leaseName)); err != nil {
		return err
	}
	return fsx.SyncDir(dir)
}
