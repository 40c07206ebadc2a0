package fsx

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckWritable says whether a file can be written in dir and made to
// last: nil, or the error a read-only file system or a full disk gives.
// It makes a small file, writes and syncs it, and removes it.
func CheckWritable(dir string) error {
	var r [6]byte
	rand.Read(r[:])
	name := filepath.Join(dir, ".write-check-"+hex.EncodeToString(r[:]))
	f, err := Open(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(make([]byte, 512))
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close(), os.Remove(name))
}

// Cause is the system's reason of a file error, without its path: for a
// message sent to someone who mustn't learn the machine's paths.
func Cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
