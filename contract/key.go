package contract

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// MaxKey bounds an endpoint key.
const MaxKey = 4096

// ParseKey reads an endpoint key from a key file's bytes: the key as text,
// one trailing newline not part of it.
func ParseKey(file []byte) ([]byte, error) {
	key := bytes.TrimSuffix(file, []byte("\n"))
	key = bytes.TrimSuffix(key, []byte("\r"))
	if len(key) == 0 {
		return nil, refuse("key", "the key file holds a key")
	}
	if len(key) > MaxKey {
		return nil, refuse("key", "a key is at most %d bytes", MaxKey)
	}
	for _, c := range key {
		if c < 0x21 || c > 0x7e {
			return nil, refuse("key", "a key is printable ASCII with no space")
		}
	}
	return key, nil
}

// ReadKeyFile reads an endpoint key from the file at path (ParseKey),
// reading no more of it than a key and its newline can be: a longer file
// is refused without being read whole. The file is the operator's, named
// by them, so a link to it is followed (a secret mounted as one).
func ReadKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the key file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxKey+3)) // the key, \r\n, one more
	if err != nil {
		return nil, fmt.Errorf("read the key file %s: %w", path, err)
	}
	key, err := ParseKey(b)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return key, nil
}
