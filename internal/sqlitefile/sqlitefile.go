// Package sqlitefile opens a SQLite database file through
// modernc.org/sqlite's database/sql driver without ever following a link
// to it: store/sqlite's events.sqlite and memory/fts's index.sqlite.
//
// database/sql opens a connection whenever its pool wants one, long
// after the file was checked, and SQLite opens by name. SQLite never
// opens the last part of a name through a link (its Unix files are
// opened O_NOFOLLOW), but it first resolves the whole name, links and
// all, and opens what a link points to under that name; and
// modernc.org/sqlite has no SQLITE_OPEN_NOFOLLOW (its open flags are
// fixed). So Check opens the file once, not through a link, and each
// connection a Connector opens is held, before it reads a byte, to be
// that file: the file under the name SQLite opened (PRAGMA
// database_list, which reads nothing of it), compared by os.SameFile.
package sqlitefile

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	sqlite3 "modernc.org/sqlite"

	"github.com/lnk-dev/link/internal/fsx"
)

// ErrReplaced is the refusal of a connection whose database file isn't
// the file Check checked: a file put in its place since (a hard link to
// another agent's, say). A symbolic link put in its place is fsx.ErrSymlink.
var ErrReplaced = errors.New("not the file the driver checked when it opened: replaced since")

// ErrHardLink is the refusal of a database file with another name (a
// hard link), as Names tells: the other name may be another agent's
// file, which a write here would change.
var ErrHardLink = errors.New("a file with another name too (a hard link), perhaps another agent's: not opened")

// Check refuses a database at path, or its journal, WAL or shared memory
// file, that is a symbolic link (fsx.ErrSymlink): SQLite would follow it.
// The database is made here, 0600, if it isn't there. It returns the
// file it opened, not through a link, as every connection of a Connector
// is checked to be.
func Check(path string) (fs.FileInfo, error) {
	f, err := fsx.Open(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	checked, err := f.Stat()
	f.Close()
	if err != nil {
		return nil, err
	}
	for _, suffix := range []string{"-journal", "-wal", "-shm"} {
		if fi, err := os.Lstat(path + suffix); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &fs.PathError{Op: "open", Path: path + suffix, Err: fsx.ErrSymlink}
		}
	}
	return checked, nil
}

// DSN is the data source name of the file at path with the URI
// parameters params (a=b&c=d): a file: URI, so a '?', '#' or '%' in a
// folder's name is a name's, not the URI's. It opens the file Check
// made, never making one (mode=rw: a link put in its place that points
// nowhere makes nothing there). What params set must read nothing of
// the file: a pragma that reads (journal_mode, synchronous) is one of a
// Connector's, run after the check.
func DSN(path, params string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(filepath.ToSlash(path))
	return "file:" + esc + "?mode=rw&" + params
}

// Connector opens the connections of one pool to the file at path: each
// is checked, before it reads or writes a byte, to be the file checked,
// then set up by the pool's pragmas.
type Connector struct {
	driver.Connector // modernc.org/sqlite's, of the pool's dsn

	path    string
	checked fs.FileInfo // the file as Check made or found it, not through a link
	pragmas []string
}

// NewConnector is the Connector of a pool of connections to the file at
// path (dsn, as DSN makes it), each checked to be the file checked (as
// Check returned it), then set up by pragmas.
func NewConnector(dsn, path string, checked fs.FileInfo, pragmas ...string) (*Connector, error) {
	base, err := sqlite3.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &Connector{Connector: base, path: path, checked: checked, pragmas: pragmas}, nil
}

// Connect opens a connection, checks it is to the file checked, and sets
// it up; a connection to any other file is closed and refused, having
// read nothing of it. The connection is modernc.org/sqlite's own, so
// every interface it has reaches database/sql.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		if isLink(c.path) {
			return nil, &fs.PathError{Op: "open", Path: c.path, Err: fsx.ErrSymlink}
		}
		return nil, err
	}
	if err := c.check(ctx, conn); err != nil {
		conn.Close()
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("open %s: the sqlite driver's connection runs no statements", c.path)
	}
	for _, p := range c.pragmas {
		if _, err := ex.ExecContext(ctx, p, nil); err != nil {
			conn.Close()
			return nil, err // SQLITE_BUSY as it is: a caller may wait on it
		}
	}
	return conn, nil
}

// check holds conn's database to be the file checked: the file under the
// name SQLite opened (PRAGMA database_list, which reads nothing of the
// file) must be the same file (device and inode) and not a link.
func (c *Connector) check(ctx context.Context, conn driver.Conn) error {
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return fmt.Errorf("open %s: the sqlite driver's connection runs no queries", c.path)
	}
	rows, err := q.QueryContext(ctx, "PRAGMA database_list", nil)
	if err != nil {
		return fmt.Errorf("open %s: %w", c.path, err)
	}
	defer rows.Close()
	var name string
	row := make([]driver.Value, len(rows.Columns()))
	for len(row) == 3 {
		if err := rows.Next(row); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("open %s: %w", c.path, err)
		}
		if s, _ := row[1].(string); s == "main" {
			name, _ = row[2].(string)
			break
		}
	}
	if name == "" {
		return fmt.Errorf("open %s: SQLite names no file for the database", c.path)
	}
	fi, err := os.Lstat(name)
	if err == nil && fi.Mode().IsRegular() && os.SameFile(fi, c.checked) {
		return nil
	}
	if isLink(c.path) {
		return &fs.PathError{Op: "open", Path: c.path, Err: fsx.ErrSymlink}
	}
	return fmt.Errorf("open %s: SQLite opened %s: %w", c.path, name, ErrReplaced)
}

// isLink says whether the file's name is now a symbolic link.
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}
