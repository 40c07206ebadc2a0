package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/cmd/lnk/internal/chatterm"
	"github.com/lnk-dev/link/store"
)

// chatTerminal is lnk agent chat on a terminal (cmd/lnk/internal/chatterm):
// messages read with a line editor, answers rendered.
type chatTerminal struct {
	input *chatterm.Input
	view  *termView
	fd    int
	state *term.State // the terminal as it was, given back at the end
}

// openTerminal opens the terminal when in and out are both one; ok is
// false otherwise, and the chat reads and writes plain lines. The
// history of messages is kept under the agent's home; one that can't be
// is said on stderr.
func openTerminal(in io.Reader, out io.Writer, p store.Paths, env map[string]string, stderr io.Writer) (t *chatTerminal, ok bool) {
	fin, ok1 := in.(*os.File)
	fout, ok2 := out.(*os.File)
	if !ok1 || !ok2 || fin != os.Stdin || !term.IsTerminal(int(fin.Fd())) || !term.IsTerminal(int(fout.Fd())) {
		return nil, false
	}
	state, err := term.GetState(int(fin.Fd()))
	if err != nil {
		return nil, false
	}
	input, err := chatterm.OpenInput(p.ChatHistory())
	if err != nil {
		fmt.Fprintf(stderr, "lnk agent chat: %v\n", err)
	}
	noColor := env["NO_COLOR"] != "" // no-color.org: set and not empty
	view := chatterm.NewView(fout, chatterm.ViewOptions{
		NoColor: noColor,
		Width: func() int {
			w, _, err := term.GetSize(int(fout.Fd()))
			if err != nil {
				return 0
			}
			return w
		},
	})
	return &chatTerminal{input: input, view: &termView{v: view}, fd: int(fin.Fd()), state: state}, true
}

// close gives the terminal back as it was found.
func (t *chatTerminal) close() {
	t.view.v.End()
	term.Restore(t.fd, t.state)
}

// termView shows the chat on chatterm's View.
type termView struct{ v *chatterm.View }

var _ chatView = (*termView)(nil)

func (t *termView) begin()                    { t.v.Begin() }
func (t *termView) chunk(text string)         { t.v.Chunk(text) }
func (t *termView) toolCall(id, title string) { t.v.ToolCall(id, title) }
func (t *termView) toolDone(id, status string) {
	t.v.ToolDone(id, status == acp.ToolFailed)
}
func (t *termView) line(format string, args ...any) { t.v.Line(fmt.Sprintf(format, args...)) }
func (t *termView) answer(text string)              { t.v.Markdown(text) }
func (t *termView) end()                            { t.v.End() }

// aboveInput shows lines and an answer above the line editor's prompt
// while it reads a message: an answer kept for the thread that came
// meanwhile (chat.showCame).
type aboveInput struct {
	in   *chatterm.Input
	view *termView
}

func (a aboveInput) line(format string, args ...any) { a.in.Above(fmt.Sprintf(format, args...)) }
func (a aboveInput) answer(text string)              { a.in.Above(a.view.v.Rendered(text)) }
