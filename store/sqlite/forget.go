package sqlite

import (
	"context"
	"fmt"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

var _ store.Forgetter = (*Driver)(nil)

// Forget removes every event and the lease of thread in one transaction,
// so a conversation converted away leaves no rows behind. A thread with
// none is not an error.
func (d *Driver) Forget(ctx context.Context, thread string) error {
	if err := contract.CheckThread(thread); err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("forget %s: %w", thread, err)
	}
	defer tx.Rollback()
	for _, q := range []string{`DELETE FROM events WHERE thread = ?`, `DELETE FROM leases WHERE thread = ?`} {
		if _, err := tx.ExecContext(ctx, q, thread); err != nil {
			return fmt.Errorf("forget %s: %w", thread, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("forget %s: %w", thread, err)
	}
	return nil
}
