// Package fts is Link Memory's search index: SQLite FTS5
// (modernc.org/sqlite), ranked by BM25, in one file beside the notes.
//
// The index holds no copy of the text: its FTS5 table is contentless,
// and each chunk names the bytes of its source it came from, so memory
// reads a hit's snippet from the source itself and the index stays
// smaller than what it indexes. Words are unicode61's tokens; Chinese,
// Japanese and Korean, written without spaces, are indexed a character a
// token, and a query's run of them is a phrase of its characters, so a
// query of any length finds the text it is part of.
package fts

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"strings"
	"sync"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/internal/sqlitefile"
	"github.com/lnk-dev/link/memory"
)

// schemaVersion is the file's PRAGMA user_version; a file of another is
// made again (the index is derived).
const schemaVersion = 1

const schema = `
CREATE TABLE sources(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, file TEXT NOT NULL, stamp TEXT NOT NULL);
CREATE TABLE chunks(id INTEGER PRIMARY KEY, source INTEGER NOT NULL, line INTEGER NOT NULL, lines INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL, seq INTEGER NOT NULL, label TEXT NOT NULL);
CREATE INDEX chunks_source ON chunks(source);
CREATE TABLE links(source INTEGER NOT NULL, line INTEGER NOT NULL, target TEXT NOT NULL, resolved TEXT NOT NULL, wiki TEXT NOT NULL);
CREATE INDEX links_source ON links(source);
CREATE INDEX links_resolved ON links(resolved) WHERE resolved != '';
CREATE INDEX links_wiki ON links(wiki) WHERE wiki != '';
CREATE VIRTUAL TABLE text USING fts5(body, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE vocab USING fts5vocab(text, 'row');
`

// Index is an FTS5 index in one file.
type Index struct {
	path string

	mu     sync.Mutex
	db     *sql.DB     // nil while the file can't be opened
	info   os.FileInfo // the file as opened, to know it was removed
	closed bool

	// What the file holds, kept between calls while no other connection
	// writes it (PRAGMA data_version unchanged): every source's stamp,
	// and how many chunks there are. nil when not read yet.
	stamps  map[string]string
	chunks  int64
	version int64
	gen     uint64 // how many times stamps were read from the file
}

var _ memory.Index = (*Index)(nil)

// Open opens the index at path, making it when it isn't there, and
// making it again when it isn't an index of this version (or isn't a
// database at all): it is derived from the sources. A symbolic link in
// its place, or a file with another name (a hard link), is refused,
// never followed nor removed, at Open and whenever the file is opened
// again (refused).
func Open(ctx context.Context, path string) (*Index, error) {
	x := &Index{path: path}
	if err := x.open(ctx); err != nil {
		return nil, err
	}
	return x, nil
}

func (x *Index) open(ctx context.Context) error {
	for try := 0; ; try++ {
		err := x.openOnce(ctx)
		if err == nil {
			return nil
		}
		if refused(err) {
			return fmt.Errorf("open the index %s: %w (the index is derived, made again from the sources when it is removed, but what is put in its place is never followed: remove it to have the index made again)", x.path, err)
		}
		if try == 1 {
			return fmt.Errorf("open the index %s: %w", x.path, err)
		}
		// Not an index this version reads: start it again.
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(x.path + suffix)
		}
	}
}

// refused says whether err is the refusal of what is in the index's
// place: a symbolic link, a file with another name, a file other than
// the one checked. The index isn't made again over it: a link or a hard
// link is someone's doing, perhaps pointing into another agent's home.
func refused(err error) bool {
	return errors.Is(err, fsx.ErrSymlink) || errors.Is(err, sqlitefile.ErrHardLink) || errors.Is(err, sqlitefile.ErrReplaced)
}

// openOnce opens the file, checked not to be a link nor a hard link, in
// a pool whose every connection is checked to be that file
// (sqlitefile.Connector), and makes its tables when it is new.
func (x *Index) openOnce(ctx context.Context) error {
	info, err := sqlitefile.Check(x.path)
	if err != nil {
		return err
	}
	if n, known := sqlitefile.Names(info); known && n > 1 {
		return &fs.PathError{Op: "open", Path: x.path, Err: sqlitefile.ErrHardLink}
	}
	c, err := sqlitefile.NewConnector(sqlitefile.DSN(x.path, "_pragma=busy_timeout(10000)&_txlock=immediate"), x.path, info,
		"PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL")
	if err != nil {
		return err
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	fail := func(err error) error {
		db.Close()
		return err
	}
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fail(err)
	}
	switch v {
	case schemaVersion:
	case 0:
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
			return fail(err)
		}
		if n != 0 {
			return fail(errors.New("not an index"))
		}
		if _, err := db.ExecContext(ctx, schema+fmt.Sprintf("PRAGMA user_version = %d;", schemaVersion)); err != nil {
			return fail(err)
		}
	default:
		return fail(fmt.Errorf("index version %d, not %d", v, schemaVersion))
	}
	x.db, x.info, x.stamps = db, info, nil
	return nil
}

// Close closes the file.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	if x.db == nil {
		return nil
	}
	err := x.db.Close()
	x.db = nil
	return err
}

// live is the database, opened again (empty, so made again from the
// sources) when its file was removed or replaced since it was opened,
// as another of the agent's programs may have done. What is in its
// place is looked at, not through a link (os.Lstat), and opened as Open
// opens it: a link, or a hard link, is refused, at this call and each
// after, until it is removed.
func (x *Index) live(ctx context.Context) (*sql.DB, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, errors.New("index closed")
	}
	if x.db != nil {
		if info, err := os.Lstat(x.path); err == nil && os.SameFile(info, x.info) {
			return x.db, nil
		}
		x.db.Close()
		x.db = nil
	}
	if err := x.open(ctx); err != nil {
		return nil, err
	}
	return x.db, nil
}

// Stamps is every source indexed and its stamp: read from the file
// when another connection wrote it since they were last read, else as
// this one knows them.
func (x *Index) Stamps(ctx context.Context) (map[string]string, uint64, error) {
	if err := x.fresh(ctx); err != nil {
		return nil, 0, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return maps.Clone(x.stamps), x.gen, nil
}

// fresh reads the stamps and the count of chunks again when the file was
// written by another connection (or replaced) since they were read.
func (x *Index) fresh(ctx context.Context) error {
	db, err := x.live(ctx)
	if err != nil {
		return err
	}
	var v int64
	if err := db.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	x.mu.Lock()
	known := x.stamps != nil && x.version == v
	x.mu.Unlock()
	if known {
		return nil
	}
	stamps := map[string]string{}
	rows, err := db.QueryContext(ctx, "SELECT name, stamp FROM sources")
	if err != nil {
		return fmt.Errorf("index stamps: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n, s string
		if err := rows.Scan(&n, &s); err != nil {
			return err
		}
		stamps[n] = s
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var chunks int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM chunks").Scan(&chunks); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	x.mu.Lock()
	x.stamps, x.chunks, x.version = stamps, chunks, v
	x.gen++
	x.mu.Unlock()
	return nil
}

// noted keeps what a write of this connection changed: the stamps of
// docs put and names removed, and the chunks added (less those gone).
func (x *Index) noted(put []memory.Doc, removed []string, chunks int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stamps == nil {
		return
	}
	for _, d := range put {
		x.stamps[d.Source.Name] = d.Source.Stamp
	}
	for _, n := range removed {
		delete(x.stamps, n)
	}
	x.chunks += chunks
}

// begin begins a write of the index.
func (x *Index) begin(ctx context.Context) (*sql.Tx, error) {
	db, err := x.live(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	return tx, nil
}

// Put indexes docs in one transaction, each replacing its source's
// chunks and links. The tables are written first and the FTS5 table
// last, in two statements for all docs (one deletes, one adds): FTS5
// writes what it holds to a new segment at each statement of the
// transaction once it is part of it, so a statement a chunk would make
// a segment of each chunk.
func (x *Index) Put(ctx context.Context, docs []memory.Doc) error {
	if len(docs) == 0 {
		return nil
	}
	tx, err := x.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = tx.PrepareContext(ctx, q)
		return s
	}
	upsert := stmt("INSERT INTO sources(name, kind, file, stamp) VALUES(?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET kind=excluded.kind, file=excluded.file, stamp=excluded.stamp RETURNING id")
	had := stmt("SELECT id FROM chunks WHERE source = ?")
	delChunks := stmt("DELETE FROM chunks WHERE source = ?")
	delLinks := stmt("DELETE FROM links WHERE source = ?")
	addChunk := stmt("INSERT INTO chunks(source, line, lines, off, len, seq, label) VALUES(?, ?, ?, ?, ?, ?, ?)")
	addLink := stmt("INSERT INTO links(source, line, target, resolved, wiki) VALUES(?, ?, ?, ?, ?)")
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	var old []int64    // the chunks replaced, their rows of text deleted
	var rows []textRow // the chunks added, their text added
	var added int64
	for _, d := range docs {
		s := d.Source
		var id int64
		if err := upsert.QueryRowContext(ctx, s.Name, s.Kind, s.File, s.Stamp).Scan(&id); err != nil {
			return fmt.Errorf("index %s: %w", s.Name, err)
		}
		if old, err = appendIDs(ctx, had, id, old); err != nil {
			return fmt.Errorf("index %s: %w", s.Name, err)
		}
		for _, del := range []*sql.Stmt{delChunks, delLinks} {
			if _, err := del.ExecContext(ctx, id); err != nil {
				return fmt.Errorf("index %s: %w", s.Name, err)
			}
		}
		for _, c := range d.Chunks {
			res, err := addChunk.ExecContext(ctx, id, c.Line, c.Lines, c.Off, c.Len, c.Seq, c.Label)
			if err != nil {
				return fmt.Errorf("index %s: %w", s.Name, err)
			}
			row, _ := res.LastInsertId()
			rows = append(rows, textRow{ID: row, Body: Tokens(c.Text)})
			added++
		}
		for _, l := range d.Links {
			if _, err := addLink.ExecContext(ctx, id, l.Line, l.Target, l.Resolved, l.Wiki); err != nil {
				return fmt.Errorf("index %s: %w", s.Name, err)
			}
		}
	}
	if err := putText(ctx, tx, old, rows); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	x.noted(docs, nil, added-int64(len(old)))
	return nil
}

// putText deletes the rows of text of the chunks old and adds those of
// the chunks added, rows, within tx. The rows go in JSON, a statement
// for as many as come to textGroup bytes: few statements, and what is
// held at once stays small.
func putText(ctx context.Context, tx *sql.Tx, old []int64, rows []textRow) error {
	if len(old) > 0 {
		ids, _ := json.Marshal(old)
		if _, err := tx.ExecContext(ctx, "DELETE FROM text WHERE rowid IN (SELECT value FROM json_each(?))", string(ids)); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	for len(rows) > 0 {
		n, size := 0, 0
		for n < len(rows) && (n == 0 || size+len(rows[n].Body) <= textGroup) {
			size += len(rows[n].Body)
			n++
		}
		b, err := json.Marshal(rows[:n])
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO text(rowid, body) SELECT json_extract(value, '$.i'), json_extract(value, '$.b') FROM json_each(?)", string(b)); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		rows = rows[n:]
	}
	return nil
}

// textGroup is how many bytes of chunks' text one statement of Put
// passes the full text.
const textGroup = 1 << 20

// textRow is a chunk's row of the FTS5 table, as Put passes it in JSON.
type textRow struct {
	ID   int64  `json:"i"`
	Body string `json:"b"`
}

// appendIDs adds to ids the chunks of source id.
func appendIDs(ctx context.Context, q *sql.Stmt, id int64, ids []int64) ([]int64, error) {
	rows, err := q.QueryContext(ctx, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c int64
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		ids = append(ids, c)
	}
	return ids, rows.Err()
}

// Remove forgets the sources named: their tables' rows first, then their
// rows of the FTS5 table in one statement (as Put).
func (x *Index) Remove(ctx context.Context, names []string) error {
	tx, err := x.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	had, err := tx.PrepareContext(ctx, "SELECT c.id FROM chunks c JOIN sources s ON s.id = c.source WHERE s.name = ?")
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	var old []int64
	for _, n := range names {
		rows, err := had.QueryContext(ctx, n)
		if err != nil {
			return fmt.Errorf("index: forget %s: %w", n, err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			old = append(old, id)
		}
		rows.Close()
		for _, q := range []string{
			"DELETE FROM chunks WHERE source IN (SELECT id FROM sources WHERE name = ?)",
			"DELETE FROM links WHERE source IN (SELECT id FROM sources WHERE name = ?)",
			"DELETE FROM sources WHERE name = ?",
		} {
			if _, err := tx.ExecContext(ctx, q, n); err != nil {
				return fmt.Errorf("index: forget %s: %w", n, err)
			}
		}
	}
	if len(old) > 0 {
		ids, _ := json.Marshal(old)
		if _, err := tx.ExecContext(ctx, "DELETE FROM text WHERE rowid IN (SELECT value FROM json_each(?))", string(ids)); err != nil {
			return fmt.Errorf("index: forget: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	x.noted(nil, names, -int64(len(old)))
	return nil
}

// Backlinks are the links resolved to name, and the wiki links naming
// wiki, in order of their source and line.
func (x *Index) Backlinks(ctx context.Context, name, wiki string) ([]memory.Backlink, error) {
	db, err := x.live(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT s.name, l.line, l.target, l.resolved = '' FROM links l JOIN sources s ON s.id = l.source
		WHERE (l.resolved = ?1 OR l.wiki = ?2 AND l.resolved = '') AND s.name != ?1 ORDER BY s.name, l.line LIMIT 500`, name, wiki)
	if err != nil {
		return nil, fmt.Errorf("backlinks of %s: %w", name, err)
	}
	defer rows.Close()
	var out []memory.Backlink
	for rows.Next() {
		var b memory.Backlink
		if err := rows.Scan(&b.From, &b.Line, &b.Target, &b.Wiki); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Wiki is the indexed files whose base name without .md is key (in any
// case), shortest first.
func (x *Index) Wiki(ctx context.Context, key string) ([]string, error) {
	db, err := x.live(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sources WHERE kind = 'file' AND (lower(name) LIKE '%/' || ?1 || '.md' OR lower(name) LIKE '%/' || ?1) ORDER BY length(name), name LIMIT 100`, strings.ToLower(key))
	if err != nil {
		return nil, fmt.Errorf("wiki link %s: %w", key, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
