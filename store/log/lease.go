package log

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/store"
)

// Lease takes the thread's lease for holder until ttl from now, or renews
// it for the holder that has it. It reads and replaces lease.json under
// the conversation's lock, so two processes contend as two turns do.
func (d *Driver) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	l, err := d.lease(ctx, thread, holder, ttl)
	if err != nil {
		return store.Lease{}, fmt.Errorf("lease %s for %s: %w", thread, holder, err)
	}
	return l, nil
}

func (d *Driver) lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	if holder == "" {
		return store.Lease{}, errors.New("no holder")
	}
	dir, err := d.Folder(thread)
	if err != nil {
		return store.Lease{}, err
	}
	f, err := openLocked(ctx, dir, os.O_RDWR|os.O_CREATE, unix.LOCK_EX)
	if err != nil {
		return store.Lease{}, err
	}
	defer f.Close()
	now := d.Now()
	cur, ok, err := readLease(dir)
	if err != nil {
		return store.Lease{}, err
	}
	if ok && cur.Holder != holder && now.Before(cur.Expires) {
		return store.Lease{}, fmt.Errorf("%w by %s until %s", store.ErrLeaseHeld, cur.Holder, cur.Expires.Format(time.RFC3339Nano))
	}
	l := store.Lease{Holder: holder, Expires: now.Add(ttl).UTC()}
	if err := writeLease(dir, l); err != nil {
		return store.Lease{}, err
	}
	return l, nil
}

// Release lets holder's lease of the thread go; a lease another holds, or
// none, is left as it is.
func (d *Driver) Release(ctx context.Context, thread, holder string) error {
	if err := d.release(ctx, thread, holder); err != nil {
		return fmt.Errorf("release %s for %s: %w", thread, holder, err)
	}
	return nil
}

func (d *Driver) release(ctx context.Context, thread, holder string) error {
	dir, err := d.Folder(thread)
	if err != nil {
		return err
	}
	f, err := openLocked(ctx, dir, os.O_RDONLY, unix.LOCK_EX)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a conversation not begun has no lease
	}
	if err != nil {
		return err
	}
	defer f.Close()
	cur, ok, err := readLease(dir)
	if err != nil || !ok || cur.Holder != holder {
		return err
	}
	return os.Remove(filepath.Join(dir, LeaseFile))
}

// readLease reads dir's lease.json; ok is false when there is none.
func readLease(dir string) (l store.Lease, ok bool, err error) {
	path := filepath.Join(dir, LeaseFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return store.Lease{}, false, nil
	}
	if err != nil {
		return store.Lease{}, false, err
	}
	if err := json.Unmarshal(b, &l); err != nil || l.Holder == "" {
		// Written whole by rename, so this is no writer's leftover.
		return store.Lease{}, false, fmt.Errorf("%s: %w: not a lease", path, store.ErrCorrupt)
	}
	return l, true, nil
}

// writeLease replaces dir's lease.json whole, by rename, so a reader
// never sees half of one. It isn't synced: a lease lost with the machine
// is a lease nobody holds, as after its holder's end.
func writeLease(dir string, l store.Lease) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, LeaseFile+".new")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, LeaseFile))
}
