package mcpserve

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/lnk-dev/link/internal/fsx"
)

// Secret is the last element of the one path a tool server answers
// at, /mcp/<secret>: 256 random bits, as base64url 43 characters. It
// prints and logs as a placeholder, never as itself.
type Secret struct{ v string }

// secretBytes is how much chance a tool server's secret holds.
const secretBytes = 32

// NewSecret is a secret made now from crypto/rand.
func NewSecret() Secret {
	b := make([]byte, secretBytes)
	rand.Read(b) // never fails: crypto/rand panics rather than return an error
	return Secret{base64.RawURLEncoding.EncodeToString(b)}
}

// String is a placeholder: the secret is said by Running.URL alone.
func (Secret) String() string { return "<tool's secret>" }

// LogValue keeps the secret out of a log (slog).
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// parseSecret is the secret a file holds: 43 base64url characters
// standing for 32 bytes, and at most one newline after them.
func parseSecret(b []byte) (Secret, bool) {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if len(b) != base64.RawURLEncoding.EncodedLen(secretBytes) {
		return Secret{}, false // and the decoder would pass over newlines
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(string(b))
	if err != nil || len(raw) != secretBytes {
		return Secret{}, false
	}
	return Secret{string(b)}, true
}

// keepMu orders KeepSecret's calls in one process.
var keepMu sync.Mutex

// maxSecretFile bounds what is read of a secret file: a secret and its
// newline fit many times over.
const maxSecretFile = 256

// KeepSecret is the secret kept in the file at path (store.Paths'
// ToolSecret), so the tool's server answers at the same address across
// its starts and $<t.Env> set once stays true. On the first start, or
// with renew, it makes one (NewSecret) and writes it there, mode 0600,
// through a file beside it renamed into place; the folder is made 0700.
// Nothing is read or written through a symbolic link. A file that is
// kept is used as it is; one that can't be trusted is made anew, and
// logger told why at Warn, never the secret: one readable by other users
// (its secret may be known: a new one makes the old worthless), or one
// holding no secret (cut short, or written by hand). A secret file that
// is a link, not a regular file or another user's, and a folder other
// users may write, are refused, naming the rule: they are no file this
// server made. Concurrent starts on one home agree on one secret (the
// folder's lock).
func (t Tool) KeepSecret(ctx context.Context, path string, renew bool, logger *slog.Logger) (Secret, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Secret{}, fmt.Errorf("%s's secret: %w", t.Name, err)
	}
	if err := t.checkSecretDir(dir); err != nil {
		return Secret{}, err
	}
	keepMu.Lock() // where LockDir orders no one within a process
	defer keepMu.Unlock()
	unlock, err := fsx.LockDir(ctx, dir)
	if err != nil {
		return Secret{}, fmt.Errorf("%s's secret: %w", t.Name, err)
	}
	defer unlock()
	if !renew {
		s, why, err := t.readSecret(path)
		if err != nil {
			return Secret{}, err
		}
		if s.v != "" {
			return s, nil
		}
		if why != "" && logger != nil {
			logger.Warn(t.Name+"'s secret file "+why+": made a new secret; set $"+t.Env+" to the address lnk "+t.Name+" serve prints", "file", path)
		}
	}
	s := NewSecret()
	if err := fsx.Replace(path, []byte(s.v+"\n"), true); err != nil {
		return Secret{}, fmt.Errorf("%s's secret: write %s: %w", t.Name, path, err)
	}
	return s, nil
}

// readSecret reads the secret at path; or, for none there, no secret
// and no why; or says why a new one is made (readable by others, holding
// no secret); or why the file is refused (err).
func (t Tool) readSecret(path string) (s Secret, why string, err error) {
	f, err := fsx.Open(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Secret{}, "", nil
	}
	if errors.Is(err, fsx.ErrSymlink) {
		return Secret{}, "", fmt.Errorf("%s's secret: %s is a symbolic link, not followed: remove it and a new secret is made", t.Name, path)
	}
	if err != nil {
		return Secret{}, "", fmt.Errorf("%s's secret: %w", t.Name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Secret{}, "", fmt.Errorf("%s's secret: %w", t.Name, err)
	}
	if !fi.Mode().IsRegular() {
		return Secret{}, "", fmt.Errorf("%s's secret: %s is not a regular file (%s): remove it and a new secret is made", t.Name, path, fi.Mode().Type())
	}
	if !ownedByMe(fi) {
		return Secret{}, "", fmt.Errorf("%s's secret: %s is another user's: %s keeps its secret in a file of its own user", t.Name, path, t.Name)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return Secret{}, fmt.Sprintf("%s was readable by others (mode %04o, not 0600)", path, fi.Mode().Perm()), nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return Secret{}, "", fmt.Errorf("%s's secret: %w", t.Name, err)
	}
	s, ok := parseSecret(b)
	if !ok {
		return Secret{}, fmt.Sprintf("%s held no secret (%d bytes, not 43 base64url characters)", path, len(b)), nil
	}
	return s, "", nil
}

// checkSecretDir refuses a folder for the secret that is a link, another
// user's, or writable by other users: whoever may write it may put their
// own secret in it.
func (t Tool) checkSecretDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("%s's secret: %w", t.Name, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s's secret: its folder %s is a symbolic link, not followed", t.Name, dir)
	case !fi.IsDir():
		return fmt.Errorf("%s's secret: %s is not a folder", t.Name, dir)
	case !ownedByMe(fi):
		return fmt.Errorf("%s's secret: its folder %s is another user's", t.Name, dir)
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s's secret: its folder %s may be written by others (mode %04o): make it 0700 (chmod 700)", t.Name, dir, fi.Mode().Perm())
	}
	return nil
}
