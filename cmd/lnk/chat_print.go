package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/lnk-dev/link/acp"
)

// printer shows an answer as it streams: its text to text, each tool call
// (⚙ memory__search …, then done or failed) to calls, each on a line of
// its own.
type printer struct {
	mu     sync.Mutex
	text   io.Writer
	calls  io.Writer
	midway bool              // text's last line isn't ended
	called bool              // a tool call's line was the last shown
	titles map[string]string // tool calls shown, by id
}

// chatView is where lnk agent chat shows an answer and its own lines:
// the printer, plain lines, when the output is piped; the terminal's view
// (chat_term.go) when it is a terminal.
type chatView interface {
	sink
	begin()                          // a message was sent: its answer is awaited
	line(format string, args ...any) // a line of lnk's own
	answer(text string)              // a whole answer, kept for the thread
	end()                            // the answer ended
}

var _ chatView = (*printer)(nil)

func newPrinter(text, calls io.Writer) *printer {
	return &printer{text: text, calls: calls, titles: map[string]string{}}
}

func (p *printer) chunk(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.called {
		// The text of a round after calls: its break from the last
		// round's text is the calls' lines.
		text = strings.TrimLeft(text, "\n")
	}
	if text == "" {
		return
	}
	p.called = false
	io.WriteString(p.text, text)
	p.midway = !strings.HasSuffix(text, "\n")
}

// breakLine ends text's line, when a call is shown where text is.
func (p *printer) breakLine() {
	if p.midway && p.calls == p.text {
		io.WriteString(p.text, "\n")
		p.midway = false
	}
}

func (p *printer) toolCall(id, title string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if title = oneLine(title); title == "" { // a line of its own, never the terminal's codes
		title = "a tool"
	}
	p.titles[id] = title
	p.breakLine()
	fmt.Fprintf(p.calls, "⚙ %s …\n", title)
	p.called = true
}

func (p *printer) toolDone(id, status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	title := p.titles[id]
	if title == "" {
		title = "a tool"
	}
	p.breakLine()
	p.called = true
	if status == acp.ToolFailed {
		fmt.Fprintf(p.calls, "⚙ %s failed\n", title)
	} else {
		fmt.Fprintf(p.calls, "⚙ %s done\n", title)
	}
}

func (p *printer) begin() {}

// answer writes a whole answer to text, on lines of its own.
func (p *printer) answer(text string) { p.line("%s", strings.TrimSuffix(text, "\n")) }

// line writes a line of its own to text.
func (p *printer) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.midway {
		io.WriteString(p.text, "\n")
		p.midway = false
	}
	fmt.Fprintf(p.text, format+"\n", args...)
	p.called = false
}

// end ends the answer's last line.
func (p *printer) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.midway {
		io.WriteString(p.text, "\n")
		p.midway = false
	}
}
