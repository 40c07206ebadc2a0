package scheduler

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
)

// A job is one message the scheduler carries for a call of the team's
// (start_task, ask_teammate) and its answer back: a task for a subagent,
// run in a conversation of the agent's own, or a message to a teammate,
// another agent of the owner's. Each is a file of its own under
// <home>/scheduler/jobs/, written 0600 through a temporary file renamed
// over it (fsx.Replace, synced) at each step, and read again at start,
// so a job outlives a crash of the scheduler or of the harness and its
// answer reaches the conversation that asked exactly once.

// The kinds of job.
const (
	kindTask  = "task"  // a subagent's task: from task:<id>, in the agent's own link:task-<id>
	kindAgent = "agent" // a message to a teammate: from agent:<this agent>, in its link:agent-<this agent>
)

// The stages a job goes through, in order; a job done is removed.
const (
	stageAsking   = "asking"   // its message is being sent, its answer waited for
	stageKept     = "kept"     // its message was stored before a crash: its answer is kept for _link/recover there
	stageAnswered = "answered" // the answer is in hand, being brought back to the parent
	stageUpKept   = "upkept"   // told into a task's conversation before a crash: that task's answer to it is kept there
	stageDone     = "done"     // a task that ended, kept so its conversation's later answers go on to its parent
)

// Bounds of a job and its file.
const (
	maxJobFile   = 4 << 20 // a job's file: its text and its answer, each bounded, and JSON's escapes
	MaxTaskText  = 64 << 10
	MaxReplyText = 1<<20 - 1<<10 // an answer brought back is cut here, saying so, so that it is a message (1 MiB at most)
	maxJobs      = 256           // jobs of an agent at once: running tasks and messages to teammates
)

// job is one job's file.
type job struct {
	ID   string `json:"id"`   // 16 lowercase hex digits
	Kind string `json:"kind"` // kindTask or kindAgent
	// Parent is the conversation the call was made in, where the answer
	// comes back; Hops the hops of the message the call answered.
	Parent string `json:"parent"`
	Hops   int    `json:"hops"`
	// Thread is the conversation the message goes to: the agent's own
	// (a task's) or the teammate's.
	Thread string `json:"thread"`
	// Teammate is the agent a message to a teammate goes to.
	Teammate string `json:"teammate,omitempty"`
	Text     string `json:"text"`
	// Tools and Model are a task's: the tools its conversation has (never
	// more than its parent's) and the model it runs on ("" the agent's).
	Tools *[]string `json:"tools,omitempty"`
	Model string    `json:"model,omitempty"`
	// Since is when the job was made: its messages were stored, if they
	// were, no earlier.
	Since time.Time `json:"since"`
	Stage string    `json:"stage"`
	// KeptSince is when its message was found stored before a crash: its
	// answer is looked for among those kept from then on.
	KeptSince time.Time `json:"keptSince,omitzero"`
	// Answer is what comes back to the parent, once in hand; Failed says
	// it tells why the message got no answer.
	Answer string `json:"answer,omitempty"`
	Failed bool   `json:"failed,omitempty"`
	// To is where the answer goes now when not to Parent: the later answer
	// of the task whose conversation it went into, carried on up to that
	// task's parent, from Via (task:<id>); Ups counts the tasks it came up
	// through.
	To  string `json:"to,omitempty"`
	Via string `json:"via,omitempty"`
	Ups int    `json:"ups,omitempty"`
	// Ended is when a task ended (stageDone).
	Ended time.Time `json:"ended,omitzero"`
}

// from is who the job's answer comes back from: task:<id>, or the
// teammate as agent:<name>.
func (j *job) from() string {
	if j.Via != "" {
		return j.Via
	}
	if j.Kind == kindTask {
		return "task:" + j.ID
	}
	return "agent:" + j.Teammate
}

// askID and replyID are the ids the job's two messages are sent once by
// (contract.MessageMeta): the same at every try, across restarts.
func (j *job) askID() string { return j.Kind + ":" + j.ID + ":ask" }
func (j *job) replyID() string {
	if j.Ups > 0 {
		return j.Kind + ":" + j.ID + ":reply." + strconv.Itoa(j.Ups)
	}
	return j.Kind + ":" + j.ID + ":reply"
}

// to is the conversation j's answer goes to now.
func (j *job) to() string {
	if j.To != "" {
		return j.To
	}
	return j.Parent
}

// hops is how far away j's answer is where it goes now: two past the
// message its call answered, and one more for each task it came up
// through.
func (j *job) hops() int { return j.Hops + 2 + j.Ups }

// newJobID is a job's id: 8 random bytes in lowercase hex.
func newJobID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// check checks every rule of a job, as read from its file.
func (j *job) check() error {
	switch {
	case len(j.ID) != 16 || strings.Trim(j.ID, "0123456789abcdef") != "":
		return errors.New("id is 16 lowercase hex digits")
	case j.Kind != kindTask && j.Kind != kindAgent:
		return fmt.Errorf("kind is %s or %s", kindTask, kindAgent)
	case j.Stage != stageAsking && j.Stage != stageKept && j.Stage != stageAnswered && j.Stage != stageUpKept && j.Stage != stageDone:
		return fmt.Errorf("stage is %s, %s, %s, %s or %s", stageAsking, stageKept, stageAnswered, stageUpKept, stageDone)
	case j.Ups < 0 || j.Ups > MaxHops:
		return fmt.Errorf("ups is 0 to %d", MaxHops)
	case j.Hops < 0 || j.Hops >= MaxHops:
		return fmt.Errorf("hops is 0 to %d", MaxHops-1)
	case j.Text == "" || len(j.Text) > MaxTaskText || !utf8.ValidString(j.Text):
		return fmt.Errorf("text is 1 to %d bytes of UTF-8", MaxTaskText)
	case len(j.Answer) > MaxReplyText+256 || !utf8.ValidString(j.Answer):
		return fmt.Errorf("answer is at most %d bytes of UTF-8", MaxReplyText)
	case j.Since.IsZero():
		return errors.New("since is when it was made")
	}
	if err := contract.CheckThread(j.Parent); err != nil {
		return fmt.Errorf("parent: %w", err)
	}
	if err := contract.CheckThread(j.Thread); err != nil {
		return err
	}
	if j.To != "" {
		if err := contract.CheckThread(j.To); err != nil {
			return fmt.Errorf("to: %w", err)
		}
	}
	if j.Via != "" {
		if err := contract.CheckFrom(j.Via); err != nil {
			return fmt.Errorf("via: %w", err)
		}
	}
	if j.Kind == kindAgent {
		if err := contract.CheckAgentName(j.Teammate); err != nil {
			return err
		}
	} else if j.Teammate != "" {
		return errors.New("a task has no teammate")
	}
	if j.Tools != nil {
		if len(*j.Tools) > contract.MaxTools {
			return fmt.Errorf("tools is at most %d names", contract.MaxTools)
		}
		for _, t := range *j.Tools {
			if err := contract.CheckToolName(t); err != nil {
				return err
			}
		}
	}
	if j.Model != "" {
		if err := contract.CheckModel(j.Model); err != nil {
			return err
		}
	}
	return nil
}

// parseJob reads a job's file, refusing one that breaks a rule.
func parseJob(b []byte) (*job, error) {
	if len(b) > maxJobFile {
		return nil, fmt.Errorf("over %d bytes", maxJobFile)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var j job
	if err := d.Decode(&j); err != nil {
		return nil, fmt.Errorf("not a job's JSON object: %w", err)
	}
	if d.More() {
		return nil, errors.New("one JSON object")
	}
	if err := j.check(); err != nil {
		return nil, err
	}
	return &j, nil
}

// jobs is the folder of an agent's jobs: <home>/scheduler/jobs.
type jobs struct{ dir string }

// jobFile is the file of the job with id.
func (s jobs) jobFile(id string) string { return filepath.Join(s.dir, id+".json") }

// save writes j's file whole, durably, readable by its owner alone.
func (s jobs) save(j *job) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("save job %s: %w", j.ID, err)
	}
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("save job %s: %w", j.ID, err)
	}
	if err := fsx.Replace(s.jobFile(j.ID), b, true); err != nil {
		return fmt.Errorf("save job %s: %w", j.ID, err)
	}
	return nil
}

// remove forgets a job done.
func (s jobs) remove(id string) error {
	err := os.Remove(s.jobFile(id))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove job %s: %w", id, err)
	}
	return fsx.SyncDir(s.dir)
}

// load reads every job's file, oldest first. A file that doesn't read
// (corrupt, not a regular file, too big) is set aside as <name>.bad,
// said in bad, and the rest are read: one bad file costs one job.
func (s jobs) load() (all []*job, bad []error, err error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read jobs: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(s.dir, name)
		b, err := fsx.ReadLimit(path, maxJobFile)
		if errors.Is(err, fs.ErrNotExist) {
			continue // ended and removed since the listing
		}
		var j *job
		if err == nil {
			j, err = parseJob(b)
		}
		if err == nil && j.ID != id {
			err = errors.New("its id isn't its file's name")
		}
		if err != nil {
			bad = append(bad, fmt.Errorf("job %.40s: %w (set aside as %s.bad)", name, err, name))
			os.Rename(path, path+".bad")
			continue
		}
		all = append(all, j)
	}
	sort.Slice(all, func(a, b int) bool { return all[a].Since.Before(all[b].Since) })
	return all, bad, nil
}
