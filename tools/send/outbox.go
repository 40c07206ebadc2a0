package send

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
)

// Outbox is a folder of messages recorded to send: one file each,
// <name>.json, readable by its owner alone, written whole (a temporary
// file synced, then renamed, the folder synced), and removed once the
// harness has the message. A message is recorded before its first try,
// so a crash of the sender anywhere leaves it there to send again.
type Outbox struct {
	dir string
	now func() time.Time

	mu sync.Mutex
}

// maxOutboxFile bounds one recorded message's file: its text, and room.
const maxOutboxFile = MaxText*2 + 64<<10

// ErrCorruptMessage: a file of the outbox that isn't a message.
var ErrCorruptMessage = errors.New("not a message this outbox wrote")

// OpenOutbox opens the outbox in dir, making it (0700) if it isn't there.
// A dir that is a symbolic link is refused. now is the clock (nil:
// time.Now).
func OpenOutbox(dir string, now func() time.Time) (*Outbox, error) {
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make the outbox: %w", err)
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("open the outbox: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("open the outbox %s: not a folder (a symbolic link is never followed)", dir)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open the outbox: %w", err)
	}
	// A write a crash cut short left its temporary file (fsx.Replace's
	// .<name>.<random>): the message it held is the one before, or none.
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".json.") {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	return &Outbox{dir: dir, now: now}, nil
}

// NewID makes a message id no other message has: prefix (a good id's
// letters, "" for none), then 16 random hex digits.
func NewID(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	if prefix == "" {
		return hex.EncodeToString(b[:])
	}
	return prefix + "." + hex.EncodeToString(b[:])
}

// fileName is the file of message id: its id, with the characters a
// file name can't hold written as they are nowhere else (/ as %2F, : as
// %3A, % as %25).
func fileName(id string) string {
	r := strings.NewReplacer("%", "%25", "/", "%2F", ":", "%3A")
	return r.Replace(id) + ".json"
}

// Add records m (its ID made by NewID when empty, its Since now when
// zero) and returns it as recorded. A message of the same id recorded
// already is replaced: recording one message twice records it once.
func (o *Outbox) Add(m Message) (Message, error) {
	if m.ID == "" {
		m.ID = NewID("")
	}
	if m.Since.IsZero() {
		m.Since = o.now()
	}
	m.Since = m.Since.UTC()
	if err := m.Check(); err != nil {
		return m, err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return m, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := fsx.Replace(filepath.Join(o.dir, fileName(m.ID)), b, true); err != nil {
		return m, fmt.Errorf("record message %s: %w", m.ID, err)
	}
	return m, nil
}

// Done forgets message id: the harness has it. Forgetting one not there
// is no error.
func (o *Outbox) Done(id string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	err := os.Remove(filepath.Join(o.dir, fileName(id)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("forget message %s: %w", id, err)
	}
	return fsx.SyncDir(o.dir)
}

// Pending reads the messages recorded and not done, oldest first. A file
// that isn't one (cut short by hand, another program's) is named in bad
// and left as it is; the rest are read.
func (o *Outbox) Pending() (msgs []Message, bad []error, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	entries, err := os.ReadDir(o.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read the outbox: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		b, err := fsx.ReadLimit(filepath.Join(o.dir, name), maxOutboxFile)
		if err != nil {
			bad = append(bad, fmt.Errorf("outbox %s: %w", name, err))
			continue
		}
		var m Message
		if err := json.Unmarshal(b, &m); err != nil || m.Check() != nil || fileName(m.ID) != name {
			bad = append(bad, fmt.Errorf("outbox %s: %w", name, ErrCorruptMessage))
			continue
		}
		msgs = append(msgs, m)
	}
	sort.SliceStable(msgs, func(i, j int) bool { return msgs[i].Since.Before(msgs[j].Since) })
	return msgs, bad, nil
}
