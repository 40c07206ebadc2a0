// Package sqlite keeps an agent's conversations in one SQLite file,
// chats/events.sqlite, so they move with the agent: Link's first store
// driver (lnk-sqlite).
//
// Each event is a row (thread, seq, body), its body the event's JSON line
// as store.MarshalLine makes it, so every driver keeps the same bytes. The
// file is in WAL mode, and every write is a transaction that takes the
// file's lock first (BEGIN IMMEDIATE), so two processes sharing the file
// never write one number twice and never both hold a lease.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lnk-dev/link/internal/sqlitefile"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
)

// Name is the driver's name, as a conversation folder's marker says it
// (store.sqlite).
const Name = "sqlite"

// The driver registers its name: its conversations' folders hold only
// its marker, store.sqlite (driver.Mark).
func init() { driver.Register(driver.Driver{Name: Name}) }

// File is the name of the file in the conversations folder that holds
// every conversation of the agent.
const File = "events.sqlite"

// BusyTimeout is how long a call waits for another process's write to
// end before it gives up.
const BusyTimeout = 5 * time.Second

// schemaVersion is the file's PRAGMA user_version this driver writes; a
// file of a later version is refused rather than misread.
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS events (
	thread TEXT NOT NULL,
	seq    INTEGER NOT NULL,
	body   BLOB NOT NULL,
	UNIQUE (thread, seq)
);
CREATE TABLE IF NOT EXISTS leases (
	thread  TEXT PRIMARY KEY,
	holder  TEXT NOT NULL,
	expires INTEGER NOT NULL
);
`

// Driver keeps the conversations of one agent in its events.sqlite. It is
// safe for concurrent use, and any number of Drivers, in this process or
// others, may share the file.
type Driver struct {
	// Now is the clock leases are reckoned by; nil is time.Now.
	Now func() time.Time

	path string
	// w writes: one connection, so this process's writes queue here for
	// it rather than spin on the file's lock; the lock itself orders them
	// with other processes'.
	w *sql.DB
	// r reads, beside a write, as WAL lets it.
	r *sql.DB
}

var (
	_ store.Conversations = (*Driver)(nil)
	_ store.LatestReader  = (*Driver)(nil)
	_ store.Closer        = (*Driver)(nil)
)

// Open opens chats/events.sqlite, the conversations of the agent whose
// conversations folder chats is, making the folder and the file if they
// aren't there.
func Open(chats string) (*Driver, error) {
	if chats == "" {
		return nil, errors.New("open sqlite store: no conversations folder")
	}
	if err := os.MkdirAll(chats, 0o700); err != nil {
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	path, err := filepath.Abs(filepath.Join(chats, File))
	if err != nil {
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	checked, err := sqlitefile.Check(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	d := &Driver{path: path}
	w, err := newConnector(path, checked, pragmaWAL, pragmaSync)
	if err != nil {
		return nil, err
	}
	d.w = sql.OpenDB(w)
	d.w.SetMaxOpenConns(1)
	d.w.SetMaxIdleConns(1)
	d.w.SetConnMaxIdleTime(time.Minute)
	if err := d.migrateWaiting(context.Background()); err != nil {
		d.w.Close()
		return nil, err
	}
	r, err := newConnector(path, checked, pragmaWAL, pragmaSync, "PRAGMA query_only = 1")
	if err != nil {
		d.w.Close()
		return nil, err
	}
	d.r = sql.OpenDB(r)
	d.r.SetMaxOpenConns(4)
	d.r.SetMaxIdleConns(2)
	d.r.SetConnMaxIdleTime(time.Minute)
	return d, nil
}

// The pragmas every connection runs once it is checked (newConnector): they
// read the file, so they can't be in the dsn. The file is in WAL mode,
// and a commit writes whole pages to the disk before it returns
// (synchronous FULL, so an appended event is durable).
const (
	pragmaWAL  = "PRAGMA journal_mode = WAL"
	pragmaSync = "PRAGMA synchronous = FULL"
)

// dsn is the data source name of the file at path: every connection
// waits out another's write (busy_timeout) and begins each transaction
// holding the write lock; sqlitefile.DSN makes it a file: URI that never
// makes the file (mode=rw).
func dsn(path string) string {
	return sqlitefile.DSN(path, fmt.Sprintf("_pragma=busy_timeout(%d)&_txlock=immediate", BusyTimeout.Milliseconds()))
}

// ErrReplaced is the refusal of a connection whose database file isn't
// the file Open checked: a file put in its place since (a hard link to
// another agent's). A symbolic link put in its place is fsx.ErrSymlink.
var ErrReplaced = sqlitefile.ErrReplaced

// newConnector is the connector of a pool of connections to the file at
// path, each checked, before it reads a byte, to be the file Open
// checked (sqlitefile.Connector: no link followed,
// docs/decisions/002-no-link-followed.md), then set up by pragmas.
func newConnector(path string, checked fs.FileInfo, pragmas ...string) (*sqlitefile.Connector, error) {
	return sqlitefile.NewConnector(dsn(path), path, checked, pragmas...)
}

// migrateWaiting migrates, trying again for up to BusyTimeout while the
// file is busy: a new file's first connections each turn it to WAL, and
// SQLite refuses that change with SQLITE_BUSY at once, without waiting
// (busy_timeout), while another connection makes the same change.
func (d *Driver) migrateWaiting(ctx context.Context) error {
	deadline := time.Now().Add(BusyTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := d.migrate(ctx)
		var se interface{ Code() int }
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqliteBusy || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
	}
}

// sqliteBusy is SQLite's primary result code SQLITE_BUSY.
const sqliteBusy = 5

// migrate makes the file's tables, or checks they are of a version this
// driver reads.
func (d *Driver) migrate(ctx context.Context) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("open %s: %w", d.path, err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("open %s: %w", d.path, err)
	}
	if v > schemaVersion {
		return fmt.Errorf("open %s: schema version %d is newer than this driver's %d", d.path, v, schemaVersion)
	}
	if _, err := tx.ExecContext(ctx, schema+fmt.Sprintf("PRAGMA user_version = %d;", schemaVersion)); err != nil {
		return fmt.Errorf("open %s: %w", d.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("open %s: %w", d.path, err)
	}
	return nil
}

// Path is the file the driver keeps the conversations in.
func (d *Driver) Path() string { return d.path }

// Close closes the file; the last connection to it folds the WAL back in.
func (d *Driver) Close() error {
	return errors.Join(d.r.Close(), d.w.Close())
}

func (d *Driver) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}
