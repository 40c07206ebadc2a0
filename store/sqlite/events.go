package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// The queries of events, each through the (thread, seq) index
// (TestQueryPlans), so what one costs doesn't grow with the file.
const (
	queryLast   = `SELECT seq FROM events WHERE thread = ? ORDER BY seq DESC LIMIT 1`
	queryInsert = `INSERT INTO events (thread, seq, body) VALUES (?, ?, ?)`
	queryFrom   = `SELECT seq, body FROM events WHERE thread = ? AND seq >= ? ORDER BY seq`
	queryLatest = `SELECT seq, body FROM events WHERE thread = ? ORDER BY seq DESC LIMIT ?`
)

// Append writes e as event e.Seq of thread, in one transaction that holds
// the file's write lock from its start: the number must be the thread's
// last plus one (1 for the first), else store.ErrSeqTaken. Once it returns
// nil the event is on the disk.
func (d *Driver) Append(ctx context.Context, thread string, e store.Event) error {
	if err := contract.CheckThread(thread); err != nil {
		return fmt.Errorf("append #%d: %w", e.Seq, err)
	}
	body, err := store.MarshalLine(e)
	if err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	tx, err := d.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the DSN's _txlock
	if err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	defer tx.Rollback()
	var last int64 // 0 for a thread with no events
	err = tx.QueryRowContext(ctx, queryLast, thread).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	if e.Seq != last+1 {
		return fmt.Errorf("append %s#%d: %w: the next is %d", thread, e.Seq, store.ErrSeqTaken, last+1)
	}
	if _, err := tx.ExecContext(ctx, queryInsert, thread, e.Seq, body); err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	return nil
}

// Read returns thread's events numbered from and after, in order, found
// through the (thread, seq) index.
func (d *Driver) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	if err := contract.CheckThread(thread); err != nil {
		return nil, fmt.Errorf("read from #%d: %w", from, err)
	}
	rows, err := d.r.QueryContext(ctx, queryFrom, thread, from)
	if err != nil {
		return nil, fmt.Errorf("read %s from #%d: %w", thread, from, err)
	}
	es, err := d.scan(thread, rows)
	if err != nil {
		return nil, fmt.Errorf("read %s from #%d: %w", thread, from, err)
	}
	return es, nil
}

// Latest returns thread's last n events, in order, reading only those:
// the index gives them last first.
func (d *Driver) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	if err := contract.CheckThread(thread); err != nil {
		return nil, fmt.Errorf("read latest %d: %w", n, err)
	}
	if n <= 0 {
		return nil, nil
	}
	rows, err := d.r.QueryContext(ctx, queryLatest, thread, n)
	if err != nil {
		return nil, fmt.Errorf("read latest %d of %s: %w", n, thread, err)
	}
	es, err := d.scan(thread, rows)
	if err != nil {
		return nil, fmt.Errorf("read latest %d of %s: %w", n, thread, err)
	}
	slices.Reverse(es)
	return es, nil
}

// scan reads rows of (seq, body) as events, closing rows. A body that
// isn't an event, or is another number's, is store.ErrCorrupt naming the
// file, the thread and the number.
func (d *Driver) scan(thread string, rows *sql.Rows) ([]store.Event, error) {
	defer rows.Close()
	var es []store.Event
	for rows.Next() {
		var seq int64
		var body sql.RawBytes
		if err := rows.Scan(&seq, &body); err != nil {
			return nil, err
		}
		e, err := store.ParseLine(body)
		if err != nil {
			return nil, fmt.Errorf("%s: %s#%d: %w", d.path, thread, seq, err)
		}
		if e.Seq != seq {
			return nil, fmt.Errorf("%s: %s#%d: %w: its body is event %d", d.path, thread, seq, store.ErrCorrupt, e.Seq)
		}
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return es, nil
}
