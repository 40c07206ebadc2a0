package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	sqlite3 "modernc.org/sqlite"

	"github.com/lnk-dev/link/internal/fsx"
)

// ErrReplaced is the refusal of a connection whose database file isn't the
// file Open checked: a file put in its place since. (A symbolic link put in
// its place is fsx.ErrLink.)
var ErrReplaced = errors.New("not the file the driver checked when it opened: replaced since")

// connector opens the connections of one of the driver's pools, and holds
// each, before it reads or writes a byte of the file, to be the file Open
// checked: database/sql opens a connection whenever its pool wants one,
// long after Open, and SQLite opens by name, so a symbolic link put in the
// file's place in between would otherwise be followed (one agent's folder
// pointing into another's). SQLite itself never opens the last part of a
// name through a link (its Unix files are opened O_NOFOLLOW), but it first
// resolves the whole name, links and all, and opens what the link points
// to under that name; the name it opened is the database's file name,
// which the check looks at.
type connector struct {
	driver.Connector // modernc.org/sqlite's, of the pool's dsn

	path    string
	checked fs.FileInfo // the file as Open made or found it, not through a link
	// pragmas set the connection up once it is checked: any that reads
	// the file (synchronous, journal_mode) must wait for the check.
	pragmas []string
}

// newConnector is the connector of a pool of connections to the file at
// path, checked to be the file checked, set up by pragmas.
func newConnector(path string, checked fs.FileInfo, pragmas ...string) (*connector, error) {
	base, err := sqlite3.NewConnector(dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &connector{Connector: base, path: path, checked: checked, pragmas: pragmas}, nil
}

// Connect opens a connection, checks it is to the file checked, and sets
// it up; a connection to any other file is closed and refused, having
// read nothing of it. The connection is modernc.org/sqlite's own, so
// every interface it has reaches database/sql.
func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		if c.isLink() {
			return nil, &fs.PathError{Op: "open", Path: c.path, Err: fsx.ErrLink}
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
			return nil, err // SQLITE_BUSY as it is: migrateWaiting waits on it
		}
	}
	return conn, nil
}

// check holds conn's database to be the file checked: the file under the
// name SQLite opened (PRAGMA database_list, which reads nothing of the
// file) must be the same file (device and inode) and not a link.
func (c *connector) check(ctx context.Context, conn driver.Conn) error {
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
	if c.isLink() {
		return &fs.PathError{Op: "open", Path: c.path, Err: fsx.ErrLink}
	}
	return fmt.Errorf("open %s: SQLite opened %s: %w", c.path, name, ErrReplaced)
}

// isLink says whether the file's name is now a symbolic link.
func (c *connector) isLink() bool {
	fi, err := os.Lstat(c.path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}
