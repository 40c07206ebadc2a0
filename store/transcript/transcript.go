// Package transcript makes a conversation's transcript, the copy for
// people in its folder (chat.md): what was said, up to the agent's last answer.
package transcript

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
)

// File is the transcript's name in a conversation's folder. The
// transcript holds the owner's messages, those of
// people in a chat the agent is shared with (person:), and the agent's
// answers: each the last answer of a turn, one that makes no call, or the
// failure that ended it (store.KindFailure). Never a
// tool's call or answer, a summary, a message from a schedule, task,
// agent, command or webhook, or a message not yet answered (one that
// joined a running turn is answered by an answer that saw it). Each answer
// ends with a trailer, an HTML comment people don't see rendered, naming
// its event, so the transcript is known to end with the last answer. Each
// heading says who, when, and the event's number (which lnk agent chat
// fork takes):
//
//	## Owner · 2026-11-30 09:15 UTC · #9
//
//	<!-- seq 12 -->
const File = "chat.md"

// TimeLayout is how a heading gives an event's time: as the events
// keep it (UTC), so every machine makes the same transcript.
const TimeLayout = "2006-01-02 15:04 MST"

// Includes says whether e is in the transcript, once answered.
func Includes(e store.Event) bool {
	switch e.Kind {
	case store.KindMessage:
		return e.From == "" || strings.HasPrefix(e.From, "person:")
	case store.KindAnswer, store.KindFailure:
		return store.FinalAnswer(e)
	}
	return false
}

// Render renders events as the transcript: every event it includes up to
// the last final answer among them that answered every message before
// it, none after it.
func Render(events []store.Event) []byte {
	var b bytes.Buffer
	render(&b, events)
	return b.Bytes()
}

// writer is what render writes to: a buffer, or a file through bufio,
// so a large message goes to the file without a copy.
type writer interface {
	io.Writer
	io.StringWriter
}

// lastFinal is the index of events' last final answer that answered
// every message of the transcript's before it, -1 for none: a message
// that joined a running turn (written while the model answered, so
// after what its answer saw, store.Event.Seen) is still being answered
// after that answer, and the transcript, which memory searches, ends
// before it until an answer that saw it. It looks from the end, so a
// turn's window costs what came since its last answer, not its length.
func lastFinal(events []store.Event) int {
	m := len(events) // where the message asked before the answers looked at is
	var asked int64  // its number (0: none)
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if !store.FinalAnswer(e) {
			continue
		}
		if i < m { // the last message of the transcript's before this answer
			for m, asked = i-1, 0; m >= 0; m-- {
				if x := events[m]; x.Kind == store.KindMessage && Includes(x) {
					asked = x.Seq
					break
				}
			}
		}
		if e.Seen == 0 || e.Seen >= asked {
			return i
		}
	}
	return -1
}

// render writes the included events of events, up to the last final
// answer, and returns that answer's number (0: none).
func render(b writer, events []store.Event) int64 {
	last := lastFinal(events)
	if last < 0 {
		return 0
	}
	for _, e := range events[:last+1] {
		if !Includes(e) {
			continue
		}
		fmt.Fprintf(b, "## %s · %s · #%d\n\n", speaker(e), e.Time.UTC().Format(TimeLayout), e.Seq)
		if text := strings.TrimRight(e.Text, "\n"); text != "" {
			b.WriteString(text)
			b.WriteString("\n")
		}
		for _, p := range e.Parts {
			fmt.Fprintf(b, "\n_(%s)_\n", partLabel(p))
		}
		if e.Kind != store.KindMessage {
			fmt.Fprintf(b, "\n<!-- seq %d -->\n", e.Seq)
		}
		b.WriteString("\n")
	}
	return events[last].Seq
}

func speaker(e store.Event) string {
	switch {
	case e.Kind == store.KindAnswer, e.Kind == store.KindFailure:
		return "Agent"
	case e.From == "":
		return "Owner"
	case e.FromName != "":
		return oneLine(e.FromName) + " (" + oneLine(e.From) + ")"
	}
	return oneLine(e.From)
}

func partLabel(p store.Part) string {
	label := oneLine(p.Type)
	if p.Name != "" {
		label += ": " + oneLine(p.Name)
	} else if p.MimeType != "" {
		label += ": " + oneLine(p.MimeType)
	}
	return label
}

// oneLine keeps a heading one line, whatever a name holds.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// trailerSeq reads the trailer at the end of a transcript, "<!-- seq N -->"
// and a blank line: the number of the answer it ends with, 1 to 19
// digits. A hand-read suffix rather than a regexp compiled as the
// package starts (0.6 ms and 12 KB at every program's start).
func trailerSeq(b []byte) (string, bool) {
	b, ok := bytes.CutSuffix(b, []byte(" -->\n\n"))
	if !ok {
		return "", false
	}
	i := len(b)
	for i > 0 && len(b)-i < 20 && b[i-1] >= '0' && b[i-1] <= '9' {
		i--
	}
	if n := len(b) - i; n < 1 || n > 19 || !bytes.HasSuffix(b[:i], []byte("<!-- seq ")) {
		return "", false
	}
	return string(b[i:]), true
}

// End reads which answer the transcript at path ends with: 0 with ok true
// for no transcript yet (no file, or an empty one: a folder made ahead
// holds one, store/log's MakeAhead), ok false for one that doesn't end
// with an answer's trailer (cut short, or not a transcript).
func End(path string) (seq int64, ok bool, err error) {
	f, err := fsx.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, true, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	return endOf(f)
}

// endOf is End of the transcript open as f: its size, then its last
// bytes.
func endOf(f *fsx.File) (seq int64, ok bool, err error) {
	size, err := f.Size()
	if err != nil {
		return 0, false, err
	}
	if size == 0 {
		return 0, true, nil
	}
	const tail = 64
	off := max(size-tail, 0)
	var tailBuf [tail]byte
	buf := tailBuf[:size-off]
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return 0, false, err
	}
	digits, ok := trailerSeq(buf)
	if !ok {
		return 0, false, nil
	}
	seq, err = strconv.ParseInt(digits, 10, 64)
	if err != nil || seq < 1 {
		return 0, false, nil
	}
	return seq, true, nil
}

// Append adds to thread's transcript what was said since it was last
// added to, up to the last answer among turn, the events the turn holds
// (in order, each number once). When the transcript doesn't end with an
// answer, or turn doesn't hold every event since the one it ends with, it
// reads them from conv; when the transcript ends past them, or doesn't end
// with an answer, it is made again from every event. A compact
// conversation has none. kind is how the conversation is kept, when the
// caller knows it (a turn under its lease); "" reads it from the folder.
func Append(ctx context.Context, p store.Paths, conv store.Conversations, thread, kind string, turn []store.Event) error {
	if err := appendTo(ctx, p, conv, thread, kind, turn); err != nil {
		return fmt.Errorf("add to the transcript of %s: %w", thread, err)
	}
	return nil
}

func appendTo(ctx context.Context, p store.Paths, conv store.Conversations, thread, kind string, turn []store.Event) error {
	dir, err := p.Conversation(thread)
	if err != nil {
		return err
	}
	if kind == "" {
		if kind, err = driver.Of(dir); err != nil {
			return err
		}
	}
	if d, _ := driver.Lookup(kind); d.NoTranscript || kind == "" {
		return nil
	}
	lastAnswer := int64(0)
	if i := lastFinal(turn); i >= 0 {
		lastAnswer = turn[i].Seq
	}
	if lastAnswer == 0 {
		return nil // nothing said since the transcript's last answer is final yet
	}
	c, err := openCopy(filepath.Join(dir, File))
	if err != nil {
		return err
	}
	defer c.close()
	if c.ok && c.end == lastAnswer {
		return nil // already added
	}
	since, ok, err := c.since(ctx, conv, thread, turn, lastAnswer)
	if err != nil {
		return err
	}
	if !ok {
		c.close() // closed before it is replaced (Windows renames over no open file)
		return Make(ctx, p, conv, thread)
	}
	if lastFinal(since) < 0 {
		return nil
	}
	return c.add(since)
}

// copyFile is a conversation's transcript as an append finds it: open
// for reading its end and adding to it (f nil: none yet, or not to be
// written), and the number of the event it ends with (end), ok when
// that was read.
type copyFile struct {
	path string
	f    *fsx.File
	end  int64
	ok   bool
}

// openCopy opens the transcript at path, one open for reading its end
// and adding to it (its descriptor alone: fsx.File); none made till
// there is something to add.
func openCopy(path string) (*copyFile, error) {
	c := &copyFile{path: path, ok: true}
	f, err := fsx.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	switch {
	case err == nil:
		c.f = f
		if c.end, c.ok, err = endOf(f); err != nil {
			c.close()
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
		// no transcript yet
	case errors.Is(err, fs.ErrPermission):
		// Not to be written: its end read as ever, the append
		// refused as it was.
		if c.end, c.ok, err = End(path); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	return c, nil
}

// since is the events to add after the transcript's end, up to the
// turn's last answer: from turn when it holds every one, else read from
// conv. ok false: the transcript doesn't continue this conversation (it
// ends past the answer, or with what isn't one of its answers), and is
// made again.
func (c *copyFile) since(ctx context.Context, conv store.Conversations, thread string, turn []store.Event, lastAnswer int64) (_ []store.Event, ok bool, _ error) {
	end := c.end
	if !c.ok || end > lastAnswer {
		return nil, false, nil // a transcript ahead of its conversation is another's
	}
	if end > 0 {
		if e, held := find(turn, end); held && !store.FinalAnswer(e) {
			return nil, false, nil // it ends with what isn't an answer of this conversation
		}
	}
	if since := after(turn, end); since != nil {
		return since, true, nil
	}
	// The turn doesn't hold every event since the transcript's end.
	read, err := conv.Read(ctx, thread, max(end, 1))
	if err != nil {
		return nil, false, err
	}
	if end > 0 {
		if len(read) == 0 || read[0].Seq != end || !store.FinalAnswer(read[0]) {
			return nil, false, nil
		}
		read = read[1:]
	}
	return read, true, nil
}

// add writes since at the transcript's end, making it if there is none,
// and closes it.
func (c *copyFile) add(since []store.Event) error {
	if c.f == nil {
		f, err := fsx.OpenFile(c.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		c.f = f
	}
	// Written through bufio, a message's text longer than its buffer goes
	// to the file as it is, not copied; the buffer is reused across
	// appends, not made at each.
	w := writers.Get().(*bufio.Writer)
	w.Reset(c.f)
	render(w, since)
	err := w.Flush()
	w.Reset(nil)
	writers.Put(w)
	if cerr := c.close(); err == nil {
		err = cerr
	}
	return err
}

// close closes the transcript, once.
func (c *copyFile) close() error {
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}

// writers are the buffers appends to the copy write through.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 16<<10) }}

// after is the events of turn after number end, when turn holds every one
// of them (it starts at or before end+1, with no gap); nil when it doesn't.
// turn is in order, so it is looked at from its end: what came since.
func after(turn []store.Event, end int64) []store.Event {
	i := len(turn)
	for i > 0 && turn[i-1].Seq > end {
		i--
	}
	if i == len(turn) || turn[i].Seq != end+1 {
		return nil
	}
	for j := i + 1; j < len(turn); j++ {
		if turn[j].Seq != turn[j-1].Seq+1 {
			return nil
		}
	}
	return turn[i:]
}

// find is the event numbered seq in events, which are in order: looked
// for from the end, where a turn's copy looks.
func find(events []store.Event, seq int64) (store.Event, bool) {
	for i := len(events) - 1; i >= 0 && events[i].Seq >= seq; i-- {
		if events[i].Seq == seq {
			return events[i], true
		}
	}
	return store.Event{}, false
}

// Make makes thread's transcript again from every event, replacing it
// whole; a compact conversation has none.
func Make(ctx context.Context, p store.Paths, conv store.Conversations, thread string) error {
	dir, err := p.Conversation(thread)
	if err != nil {
		return err
	}
	kind, err := driver.Of(dir)
	if d, _ := driver.Lookup(kind); err != nil || d.NoTranscript || kind == "" {
		return err
	}
	all, err := conv.Read(ctx, thread, 1)
	if err != nil {
		return fmt.Errorf("make the transcript of %s: %w", thread, err)
	}
	// Replaced by rename, so a reader never sees half of it, but not
	// synced: a transcript a machine's stop left cut short or old is made
	// again, or added to, at the next answer (Append).
	if err := fsx.Replace(filepath.Join(dir, File), Render(all), false); err != nil {
		return fmt.Errorf("make the transcript of %s: %w", thread, err)
	}
	return nil
}
