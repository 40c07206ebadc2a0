// Package leasefile is the lease of a conversation kept in its folder,
// the log's and compact's: lease.json, read and written in place under the
// conversation's lock, which the driver takes and holds around each call
// (fsx.Lock on the conversation's events.jsonl), so two processes contend
// as two turns do. store.Grant decides each lease.
package leasefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// File is the lease's file in the conversation's folder.
const File = "lease.json"

// Take takes the lease kept in name (a conversation's lease.json) for
// holder until now+ttl, or renews it for the holder that has it; another
// holder's that hasn't expired is store.ErrLeaseHeld. The caller holds
// the conversation's lock.
func Take(name, holder string, ttl time.Duration, now time.Time) (store.Lease, error) {
	if holder == "" {
		return store.Lease{}, errors.New("a lease has a holder")
	}
	lf, err := fsx.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return store.Lease{}, err
	}
	defer lf.Close()
	cur, _, size, err := readLease(lf)
	if err != nil {
		return store.Lease{}, err
	}
	l, err := store.Grant(cur, holder, ttl, now.UTC())
	if err != nil {
		return store.Lease{}, err
	}
	if err := writeLease(name, lf, size, l); err != nil {
		return store.Lease{}, err
	}
	return l, nil
}

// Release lets holder's lease kept in name go; a lease another holds, or
// none, is left as it is. The caller holds the conversation's lock. It writes
// the lease over as expired, rather than removing the file, so the next
// turn's lease is a write in place too: no file is made or removed at any
// turn but a conversation's first.
func Release(name, holder string) error {
	lf, err := fsx.OpenFile(name, os.O_RDWR, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer lf.Close()
	cur, ok, size, err := readLease(lf)
	if err != nil || !ok || cur.Holder != holder || cur.Expires.IsZero() {
		return err
	}
	return writeLease(name, lf, size, store.Lease{Holder: holder})
}

// maxInPlace is the most a lease written in place takes: one write within
// a page of the file, which a process killed mid-write leaves whole or
// not at all.
const maxInPlace = 512

// readLease reads lease.json from f, and its size; ok is false when there
// is none: no lease yet, or one that was let go (expired at the zero
// time, which the holder check then passes over like any expired one).
// An empty file, or one of NULs and spaces, is a lease made and lost with
// the machine before its bytes reached the disk: none.
func readLease(f *fsx.File) (l store.Lease, ok bool, size int64, err error) {
	// A lease written in place takes one read (a regular file reads short
	// only at its end); a longer one reads on.
	var buf [maxInPlace + 1]byte
	n, err := f.ReadAt(buf[:], 0)
	b := buf[:n]
	if n == len(buf) {
		var rest []byte
		rest, err = io.ReadAll(io.NewSectionReader(f, int64(n), store.MaxLine))
		b = append(b, rest...)
	} else if errors.Is(err, io.EOF) {
		err = nil
	}
	if err != nil {
		return store.Lease{}, false, 0, err
	}
	if len(bytes.Trim(b, " \t\r\n\x00")) == 0 {
		return store.Lease{}, false, int64(len(b)), nil
	}
	if l, err = decode(b); err != nil || l.Holder == "" {
		// Written in one write or whole by rename, so this is no writer's
		// leftover.
		return store.Lease{}, false, 0, fmt.Errorf("%s: %w: not a lease", f.Name(), store.ErrCorrupt)
	}
	return l, true, int64(len(b)), nil
}

// writeLease writes l as the lease kept in name, open as f, size bytes long. A
// lease that fits is written in place: one write at the file's start,
// padded with spaces to the file's length, so no byte of a longer lease
// before it is left after it (JSON reads past the spaces) and a reader,
// who holds the conversation's lock as every writer does, never sees half
// of one. Otherwise it replaces the file whole, by rename. It isn't
// synced: a lease lost with the machine is a lease nobody holds, as after
// its holder's end.
func writeLease(name string, f *fsx.File, size int64, l store.Lease) error {
	b, err := encode(l)
	if err != nil {
		return err
	}
	if n := int64(len(b)) + 1; n <= maxInPlace && size <= maxInPlace {
		b = append(b, bytes.Repeat([]byte{' '}, int(max(size-n, 0)))...)
		_, err := f.WriteAt(append(b, '\n'), 0)
		return err
	}
	tmp := name + ".new"
	if err := fsx.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
