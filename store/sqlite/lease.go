package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

const (
	queryLease = `SELECT holder, expires FROM leases WHERE thread = ?`
	queryTake  = `INSERT INTO leases (thread, holder, expires) VALUES (?, ?, ?) ON CONFLICT (thread) DO UPDATE SET holder = excluded.holder, expires = excluded.expires`
	queryLetGo = `DELETE FROM leases WHERE thread = ? AND holder = ?`
)

// Lease takes thread's lease for holder, or renews it, until now+ttl, by
// the driver's clock. It reads and writes the lease in one transaction
// that holds the file's write lock from its start, so of two processes
// asking at once one has it and the other is told store.ErrLeaseHeld,
// with the lease as it stands. A lease past its time is anyone's.
func (d *Driver) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	if err := contract.CheckThread(thread); err != nil {
		return store.Lease{}, fmt.Errorf("lease for %q: %w", holder, err)
	}
	if holder == "" {
		return store.Lease{}, fmt.Errorf("lease %s: no holder", thread)
	}
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("lease %s for %q: ttl %v is not positive", thread, holder, ttl)
	}
	tx, err := d.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the DSN's _txlock
	if err != nil {
		return store.Lease{}, fmt.Errorf("lease %s for %q: %w", thread, holder, err)
	}
	defer tx.Rollback()
	now := d.now()
	var cur store.Lease
	var expires int64
	err = tx.QueryRowContext(ctx, queryLease, thread).Scan(&cur.Holder, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return store.Lease{}, fmt.Errorf("lease %s for %q: %w", thread, holder, err)
	default:
		cur.Expires = time.Unix(0, expires)
	}
	l, err := store.Grant(cur, holder, ttl, now)
	if err != nil {
		return l, fmt.Errorf("lease %s for %q: %w", thread, holder, err)
	}
	_, err = tx.ExecContext(ctx, queryTake, thread, holder, l.Expires.UnixNano())
	if err != nil {
		return store.Lease{}, fmt.Errorf("lease %s for %q: %w", thread, holder, err)
	}
	if err := tx.Commit(); err != nil {
		return store.Lease{}, fmt.Errorf("lease %s for %q: %w", thread, holder, err)
	}
	return l, nil
}

// Release lets holder's lease of thread go. A lease another holder has
// now, or none, is left as it is, and is not an error.
func (d *Driver) Release(ctx context.Context, thread, holder string) error {
	if err := contract.CheckThread(thread); err != nil {
		return fmt.Errorf("release for %q: %w", holder, err)
	}
	if _, err := d.w.ExecContext(ctx, queryLetGo, thread, holder); err != nil {
		return fmt.Errorf("release %s for %q: %w", thread, holder, err)
	}
	return nil
}
