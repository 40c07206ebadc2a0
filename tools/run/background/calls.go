package background

import (
	"fmt"
	"strings"
	"time"
)

// The bounds of run__read: a read answers at most MaxRead bytes of
// output, DefaultRead unless its limit says.
const (
	DefaultRead = 16 << 10
	MaxRead     = 64 << 10
)

// ReadIn is run__read's arguments.
type ReadIn struct {
	ID     string `json:"id" jsonschema:"the command's id, as run__start or run__list said it"`
	Offset int64  `json:"offset,omitempty" jsonschema:"the byte of its output to read from, 0 the first; each answer says the next"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many bytes at most: 16384 unless said, 65536 at most"`
}

// Check says which rule in breaks, if any, and sets its default limit.
func (in *ReadIn) Check() error {
	if in.Offset < 0 {
		return fmt.Errorf("offset is a byte of the output, 0 or more")
	}
	if in.Limit == 0 {
		in.Limit = DefaultRead
	}
	if in.Limit < 0 || in.Limit > MaxRead {
		return fmt.Errorf("limit is 1 to %d bytes", MaxRead)
	}
	return nil
}

// IDIn is run__stop's arguments.
type IDIn struct {
	ID string `json:"id" jsonschema:"the command's id, as run__start or run__list said it"`
}

// StartedText is run__start's answer.
func StartedText(in Info) string {
	return fmt.Sprintf("Started run:%s in the background: %s\nIts end will come as a message from run:%s in this conversation. Meanwhile run__read (id %s) reads its output and run__stop ends it.",
		in.ID, clip(in.Command, 1000), in.ID, in.ID)
}

// maxListed bounds the commands run__list says.
const maxListed = 200

// ListText is run__list's answer, the commands said from thread's view,
// as of now.
func ListText(all []Info, thread string, now time.Time) string {
	if len(all) == 0 {
		return "No background commands: run__start starts one."
	}
	running := 0
	for _, in := range all {
		if in.Status == Running {
			running++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d background commands, %d running, the latest started first:\n", len(all), running)
	for i, in := range all {
		if i == maxListed {
			fmt.Fprintf(&b, "... and %d more, older\n", len(all)-maxListed)
			break
		}
		fmt.Fprintf(&b, "- %s %s", in.ID, statusText(in, now))
		if in.Thread != thread {
			b.WriteString(" (started in another conversation)")
		}
		fmt.Fprintf(&b, ", %d bytes of output: %s\n", in.Output, clip(oneLine(in.Command), 200))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// statusText says a command's state: running for how long, how it
// ended, or lost.
func statusText(in Info, now time.Time) string {
	switch in.Status {
	case Running:
		return fmt.Sprintf("running for %s", now.Sub(in.Started).Round(time.Second))
	case Ended:
		if strings.HasPrefix(in.End.Error, "not started: ") {
			return "not started (" + clip(strings.TrimPrefix(in.End.Error, "not started: "), 500) + ")"
		}
		return fmt.Sprintf("ended %s ago, %s", now.Sub(in.End.Ended).Round(time.Second), exitText(in.End))
	default:
		return "lost (its supervisor was killed before saying how it ended)"
	}
}

// ReadText is run__read's answer: where the text read lies in the
// output, what was dropped, where to read on, then the text.
func ReadText(out Output, in Info, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run:%s, %s: ", in.ID, statusText(in, now))
	switch {
	case out.Total == 0:
		b.WriteString("no output yet.")
		return b.String()
	case out.Next == out.From:
		fmt.Fprintf(&b, "nothing more past byte %d (%d bytes of output in all).", out.From, out.Total)
		return b.String()
	}
	fmt.Fprintf(&b, "bytes %d to %d of %d", out.From, out.Next, out.Total)
	if out.Dropped > 0 {
		fmt.Fprintf(&b, " (the %d before %d are no longer kept: only the latest output is)", out.Dropped, out.From)
	}
	if out.Next < out.Total {
		fmt.Fprintf(&b, "; read on from offset %d", out.Next)
	}
	b.WriteString(":\n")
	b.WriteString(out.Text)
	return b.String()
}

// StoppedText is run__stop's answer.
func StoppedText(in Info, now time.Time) string {
	switch {
	case in.Status == Lost:
		return fmt.Sprintf("run:%s was lost already: its supervisor was killed before saying how it ended.", in.ID)
	case in.Status == Ended && !in.End.Stopped:
		return fmt.Sprintf("run:%s had ended already: %s.", in.ID, statusText(in, now))
	}
	return fmt.Sprintf("Stopped run:%s, every process of it: %s; %d bytes of output (run__read reads it).", in.ID, exitText(in.End), in.Output)
}

// oneLine is s with its line breaks as spaces, for a list.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
