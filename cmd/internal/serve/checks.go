package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
)

// MinKey is the shortest endpoint key the harness serves with. The
// contract sets no length; a key guessable in a day of tries protects
// nothing, and lnk agent chat makes keys of 64 characters.
const MinKey = 16

// ReadKey reads the endpoint key from its file: refused when the file
// holds no key (contract.ParseKey) or one shorter than MinKey. A file
// that its group or others can read is warned of, naming it, as ssh
// does for a private key.
func ReadKey(path string, logger *slog.Logger) ([]byte, error) {
	key, err := contract.ReadKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no key file at %s: make one with `lnk agent key --key-file %s` (a random key, readable by you alone)", path, path)
	}
	if err != nil {
		return nil, err
	}
	if err := checkKeyLen(key); err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	WarnReadable(path, "the key file", logger)
	return key, nil
}

// WarnReadable warns, naming the file at path (what says which it is:
// "the key file"), when its group or others can read it, as ssh does for
// a private key: it holds a secret its owner alone should read.
func WarnReadable(path, what string, logger *slog.Logger) {
	if fi, err := os.Stat(path); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		logger.Warn(what+" can be read by others than its owner: chmod 600 it", slog.String("file", path), slog.String("mode", fmt.Sprintf("%#o", fi.Mode().Perm())))
	}
}

// checkKeyLen refuses a key shorter than MinKey.
func checkKeyLen(key []byte) error {
	if len(key) < MinKey {
		return fmt.Errorf("the key is %d bytes, fewer than the %d the harness needs: make a longer one (lnk agent chat makes one of 64)", len(key), MinKey)
	}
	return nil
}

// checkHome refuses a home that can't be written (a read-only file
// system, a full disk), where every message would fail: it is made, 0700,
// when it doesn't exist yet.
func checkHome(home string) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("the home %s can't be made: %w", home, err)
	}
	if err := fsx.CheckWritable(home); err != nil {
		return fmt.Errorf("the home %s can't be written: %w", home, fsx.Cause(err))
	}
	return nil
}
