package contract

import "bytes"

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
