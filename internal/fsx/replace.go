package fsx

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ErrTooBig is returned by ReadLimit for a file over its bound.
var ErrTooBig = errors.New("file over its bound")

// ReadLimit reads name whole, at most max bytes: nil and no error when
// there is no such file, ErrTooBig when it holds more than max.
func ReadLimit(name string, max int64) ([]byte, error) {
	fh, err := OpenRegular(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %w of %d bytes", name, ErrTooBig, max)
	}
	return b, nil
}

// Replace replaces name with b through a temporary file beside it,
// renamed over it, so a reader never sees half of it and a crash leaves
// the old or the new. With sync, the file and then its folder are synced
// so the new one lasts a machine's stop; without, nothing is.
func Replace(name string, b []byte, sync bool) error {
	dir := filepath.Dir(name)
	var r [6]byte
	rand.Read(r[:])
	tmp := filepath.Join(dir, "."+filepath.Base(name)+"."+hex.EncodeToString(r[:]))
	fh, err := Open(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = fh.Write(b)
	if err == nil && sync {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if !sync {
		return nil
	}
	return SyncDir(dir)
}

// SetAside renames name, a file that doesn't read, to
// name.corrupt-<time> beside it (UTC, to the nanosecond), for a person
// to look at, its folder synced, and returns the new name: whatever was
// in it is kept, and its place is free for a file written anew.
func SetAside(name string, now time.Time) (string, error) {
	aside := name + ".corrupt-" + now.UTC().Format("20060102T150405.000000000Z")
	if err := Rename(name, aside); err != nil {
		return "", err
	}
	return aside, SyncDir(filepath.Dir(name))
}
