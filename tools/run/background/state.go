package background

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
)

// The files of a command's folder, <home>/run/<id>/.
const (
	jobFile  = "job.json"  // what to run and for whom: the server's, written before the start
	lockFile = "lock"      // held by the supervisor while it lives
	procFile = "proc.json" // the supervisor's and the command's process ids, once started
	endFile  = "end.json"  // how the command ended: the supervisor's last write
	stopFile = "stop"      // run__stop asked for the end
	toldFile = "told"      // the end was told (or needed no telling)
	outFile  = "out."      // output segments: out.<offset of its first byte>
)

// newPrefix begins the name of a command's folder being made, before it
// has its id.
const newPrefix = ".new-"

// maxStateFile bounds a read of job.json, proc.json or end.json: a file
// past it was not written by Link. job.json holds the spec (the sandbox
// takes at most 4 MiB of one) and the command as said (run takes 256 KiB).
const maxStateFile = 8 << 20

// Job is a background command as run__start made it: job.json.
type Job struct {
	ID      string          `json:"id"`
	Thread  string          `json:"thread"`  // the conversation that started it, where its end is told
	Hops    int             `json:"hops"`    // the hops of the message whose turn started it
	Command string          `json:"command"` // what the model asked to run, as said back to it
	Spec    json.RawMessage `json:"spec"`    // the command as the Builder makes it (the sandbox's spec)
	Started time.Time       `json:"started"`
	// KeepOutput is how many bytes of the latest output are kept.
	KeepOutput int64 `json:"keepOutput"`
	// Grace is how long run__stop waits after SIGTERM before SIGKILL.
	Grace time.Duration `json:"grace"`
}

// grace is j's Grace, a second when none is said.
func (j Job) grace() time.Duration {
	if j.Grace <= 0 {
		return time.Second
	}
	return j.Grace
}

// Proc is what the supervisor writes once the command started: proc.json.
type Proc struct {
	Supervisor int `json:"supervisor"` // the supervisor's process id
	PID        int `json:"pid"`        // the command's, also its process group's
}

// End is how a command ended, as its supervisor wrote it: end.json.
type End struct {
	Exit    int       `json:"exit"`             // the exit status; -1 when a signal ended it
	Signal  string    `json:"signal,omitempty"` // the signal that ended it, as named by Go ("killed")
	Stopped bool      `json:"stopped,omitempty"`
	Error   string    `json:"error,omitempty"` // why it could not be started or waited for
	Output  int64     `json:"output"`          // bytes of output in all, kept or not
	Ended   time.Time `json:"ended"`
}

// Status is a command's state as found on disk.
type Status int

const (
	Running Status = iota // its supervisor holds the lock
	Ended                 // end.json says how
	Lost                  // the lock let go with no end.json: its supervisor was killed
)

func (s Status) String() string {
	switch s {
	case Running:
		return "running"
	case Ended:
		return "ended"
	default:
		return "lost"
	}
}

// newID is a new command's id: 8 letters and digits, lowercase, as
// run:<id> says it (contract.CheckFrom's rule).
func newID() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	var b [8]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

// validID says whether id is one newID could make, so a name given by
// the model never reaches a path otherwise.
func validID(id string) bool {
	if len(id) != 8 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// writeJSON writes v as name, atomically (a temporary file synced, then
// renamed over it, the folder synced), 0600.
func writeJSON(name string, v any) error { return replaceJSON(name, v, true) }

// replaceJSON writes v as name, atomically, synced to the disk or not.
func replaceJSON(name string, v any, sync bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return fsx.Replace(name, b, sync)
}

// readJSON reads name into v, bounded; errNone when there is no file.
func readJSON(name string, v any) error {
	b, err := fsx.ReadLimit(name, maxStateFile)
	if err != nil {
		return err
	}
	if b == nil {
		return errNone
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: not Link's: %w", filepath.Base(name), err)
	}
	return nil
}

// errNone is readJSON's answer for a file not there.
var errNone = errors.New("no such file")

// exists says whether name is there.
func exists(name string) bool {
	_, err := os.Lstat(name)
	return !errors.Is(err, fs.ErrNotExist)
}
