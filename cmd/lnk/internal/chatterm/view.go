package chatterm

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// View shows the chat's answers on a terminal. What is done (a rendered
// block of the answer, a tool call's end, a notice) is written once, above
// a live part at the bottom that is drawn again in place as things
// change: the spinner with the time waited until the first word, each
// running tool call with its time, and the block of the answer still
// being written, as plain text. Everything a change draws goes out in one
// write, so the screen doesn't flicker.
type View struct {
	mu    sync.Mutex
	out   io.Writer
	width func() int // the terminal's columns
	md    *markdown
	now   func() time.Time
	tick  time.Duration

	rows       int           // rows the live part takes, the cursor below them
	waiting    bool          // no word nor tool call yet since since
	since      time.Time     // when the wait began
	unrendered string        // Markdown of the block still being written
	shown      int           // blocks of the answer shown so far
	calls      []*call       // tool calls running, in the order they began
	stop       chan struct{} // closed to stop the ticker
	stopped    chan struct{} // closed once the ticker stopped
}

// call is a tool call while it runs.
type call struct {
	id, title string
	began     time.Time
}

// ViewOptions say how a View draws.
type ViewOptions struct {
	// Width says the terminal's width in columns, asked at each draw so a
	// resized terminal is followed; nil or a result under 20 is 80.
	Width func() int
	// NoColor renders without colour (NO_COLOR is set).
	NoColor bool
	// Tick is how often the spinner and the running calls' times are
	// drawn again; 0 is 100ms.
	Tick time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// NewView draws on out, a terminal.
func NewView(out io.Writer, o ViewOptions) *View {
	v := &View{out: out, width: o.Width, md: newMarkdown(o.NoColor), now: o.Now, tick: o.Tick}
	if v.now == nil {
		v.now = time.Now
	}
	if v.tick <= 0 {
		v.tick = 100 * time.Millisecond
	}
	return v
}

func (v *View) cols() int {
	if v.width != nil {
		if w := v.width(); w >= 20 {
			return w
		}
	}
	return 80
}

// Begin starts an answer's wait: the spinner shows, with the time since,
// until the first word or tool call.
func (v *View) Begin() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.waiting, v.since = true, v.now()
	v.unrendered, v.shown, v.calls = "", 0, nil
	if v.stop == nil {
		v.stop, v.stopped = make(chan struct{}), make(chan struct{})
		go v.ticker(v.stop, v.stopped)
	}
	v.draw("")
}

// ticker draws the live part again every tick while something in it
// counts time.
func (v *View) ticker(stop, stopped chan struct{}) {
	defer close(stopped)
	t := time.NewTicker(v.tick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			v.mu.Lock()
			if v.waiting || len(v.calls) > 0 {
				v.draw("")
			}
			v.mu.Unlock()
		}
	}
}

// Chunk is more of the answer's text: each block is rendered once whole.
func (v *View) Chunk(text string) {
	text = printable(text)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.shown == 0 && v.unrendered == "" {
		text = strings.TrimLeft(text, "\n")
	}
	if text == "" {
		return
	}
	v.waiting = false
	v.unrendered += text
	done, rest := splitDone(v.unrendered)
	if done == "" {
		v.draw("")
		return
	}
	v.unrendered = rest
	v.draw(v.block(done))
}

// block is done's rendering, after a blank line when blocks came before.
func (v *View) block(done string) string {
	r := v.md.render(done, v.cols())
	if r == "" {
		return ""
	}
	if v.shown > 0 {
		r = "\n" + r
	}
	v.shown++
	return r + "\n"
}

// flush renders the block still being written, whole or not: its text
// ends there (a tool call, the answer's end).
func (v *View) flush() string {
	p := v.unrendered
	v.unrendered = ""
	if strings.TrimSpace(p) == "" {
		return ""
	}
	return v.block(p)
}

// ToolCall shows a call beginning: a line of its own, running, until it
// ends.
func (v *View) ToolCall(id, title string) {
	title = printable(title)
	v.mu.Lock()
	defer v.mu.Unlock()
	if title == "" {
		title = "a tool"
	}
	v.waiting = false
	v.calls = append(v.calls, &call{id: id, title: title, began: v.now()})
	v.draw(v.flush())
}

// ToolDone shows a call's end: its line, done or failed, with its time.
// With no call left running the model works again, and the spinner shows
// until its next word.
func (v *View) ToolDone(id string, failed bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	word := "done"
	if failed {
		word = "failed"
	}
	title := "a tool"
	took := time.Duration(0)
	for i, c := range v.calls {
		if c.id == id {
			title, took = c.title, v.now().Sub(c.began)
			v.calls = append(v.calls[:i], v.calls[i+1:]...)
			break
		}
	}
	line := fmt.Sprintf("⚙ %s %s %s", title, word, seconds(took))
	if len(v.calls) == 0 {
		v.waiting, v.since = true, v.now()
	}
	v.draw(v.flush() + v.fit(line) + "\n")
}

// Line shows a line of lnk's own (a notice), as it is.
func (v *View) Line(text string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.draw(v.flush() + text + "\n")
}

// Rendered is a whole answer as Markdown shows it, for another to write.
func (v *View) Rendered(text string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.md.render(printable(text), v.cols())
}

// Markdown shows a whole answer, rendered.
func (v *View) Markdown(text string) {
	text = printable(text)
	v.mu.Lock()
	defer v.mu.Unlock()
	out := v.flush()
	if r := v.md.render(text, v.cols()); r != "" {
		out += r + "\n"
	}
	v.draw(out)
}

// End ends the answer: what is still being written is rendered, and the
// live part goes. Calls that never ended are shown as they were last.
func (v *View) End() {
	v.mu.Lock()
	out := v.flush()
	for _, c := range v.calls {
		out += v.fit(fmt.Sprintf("⚙ %s … %s", c.title, seconds(v.now().Sub(c.began)))) + "\n"
	}
	v.calls, v.waiting = nil, false
	v.draw(out)
	stop, stopped := v.stop, v.stopped
	v.stop, v.stopped = nil, nil
	v.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
}

// spinner's frames, one a tick.
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// live is the live part's lines.
func (v *View) live() []string {
	var lines []string
	now := v.now()
	for _, c := range v.calls {
		lines = append(lines, v.fit(fmt.Sprintf("⚙ %s … %s", c.title, seconds(now.Sub(c.began)))))
	}
	if p := strings.TrimRight(v.unrendered, "\n"); p != "" {
		wrapped := ansi.Hardwrap(ansi.Wrap(ansi.Strip(p), v.cols()-1, ""), v.cols()-1, true)
		lines = append(lines, strings.Split(wrapped, "\n")...)
	}
	if v.waiting {
		waited := now.Sub(v.since)
		frame := spinner[int(waited/v.tick)%len(spinner)]
		lines = append(lines, frame+" "+seconds(waited))
	}
	return lines
}

// printable is an agent's text as the terminal shows it, never as its
// codes: each control character but a newline and a tab is left out (an
// ESC begins every code that moves the cursor, recolours, retitles the
// window or writes the clipboard; a carriage return writes over a line).
// What the model or a tool wrote is shown as words.
func printable(s string) string {
	control := func(r rune) bool {
		return (r < ' ' && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0)
	}
	if !strings.ContainsFunc(s, control) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if control(r) {
			return -1
		}
		return r
	}, s)
}

// fit cuts a line of lnk's to the terminal's width.
func (v *View) fit(line string) string { return ansi.Truncate(line, v.cols()-1, "…") }

// draw writes done above the live part and draws the live part again, in
// one write.
func (v *View) draw(done string) {
	var b strings.Builder
	b.WriteString("\r")
	if v.rows > 0 {
		b.WriteString(ansi.CursorUp(v.rows))
	}
	b.WriteString(ansi.EraseScreenBelow)
	b.WriteString(done)
	lines := v.live()
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString("\n")
	}
	v.rows = len(lines)
	io.WriteString(v.out, b.String())
}

// seconds is d as people read a wait: 0.4s, 12.0s.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}
