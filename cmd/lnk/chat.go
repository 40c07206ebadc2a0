package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// chatCmd is lnk agent chat, and the commands on its conversations.
func (m *Main) chatCmd() *cobra.Command {
	var o chatOptions
	c := &cobra.Command{
		Use:   "chat",
		Short: "chat with the agent: each line a message, its answer streamed",
		Long:  chatLong,
		Example: `  lnk agent chat
  lnk agent chat --agent research --thread link:plans
  lnk agent chat --endpoint http://127.0.0.1:18800/acp --key-file ~/.config/lnk/agents/main/endpoint.key
  echo "what did we decide?" | lnk agent chat`,
		Args: cobra.ArbitraryArgs, // said by chatMain, which names send
		RunE: func(c *cobra.Command, words []string) error {
			ctx, intr := c.Context(), m.Interrupts
			if m.Signals {
				var stop func()
				ctx, intr, stop = chatInterrupts(ctx) // Ctrl-C stops an answer (agent_chat_cancel.go)
				defer stop()
			}
			return status(chatMain(ctx, o, words, m.Env, m.Stdin, m.Terminal, intr, m.Stdout, m.Stderr))
		},
	}
	o.register(c.Flags())
	o.registerSettings(c.Flags())
	c.AddCommand(m.chatSendCmd(), m.chatShowCmd(), m.chatConvertCmd(), m.chatForkCmd())
	return c
}

const chatLong = `Chats with the agent as Link's own connection: each line read is a
message, and its answer streams as it comes, with each tool call it makes
(⚙ memory__search …, then done or failed). Answers kept for the thread
while nobody waited (a turn a crash cut short and finished after, a
message that joined a running turn) are shown at the start and before
each message, and those kept while it waits for one (a reminder's, a
task's) as they come, within 2 seconds. Ctrl-C while an answer streams stops it (the agent's turn
ends, saying so); at the prompt, Ctrl-C, /quit or the end of input ends
the chat.

The agent is reached at --endpoint, else at $LNK_PORT's endpoint when it
answers and a key to it is at hand, else lnk starts Link Harness for it
here, on its home (--home, $LNK_HOME, else the user's config folder/lnk)
with a key made once under it, on the model the provider key set chooses
(ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY, OLLAMA_HOST), or
on the offline scripted model with none.`

// maxLine bounds one message read from the input.
const maxLine = 1 << 20

// chatMain is lnk agent chat with its flags o and words: lines of in are
// messages. prompt says to show a prompt before each line (a terminal's
// input). An interrupt on intr stops the answer streaming, and at the
// prompt ends the chat. It returns the exit status.
func chatMain(ctx context.Context, o chatOptions, words []string, env map[string]string, in io.Reader, prompt bool, intr <-chan os.Signal, stdout, stderr io.Writer) int {
	if len(words) > 0 {
		fmt.Fprintf(stderr, "lnk agent chat: it reads its messages from the input, not %q (lnk agent chat send TEXT sends one)\n", words)
		return 2
	}
	if err := o.check(); err != nil {
		fmt.Fprintf(stderr, "lnk agent chat: %v\n", err)
		return 2
	}
	a, err := connect(ctx, o, env, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "lnk agent chat: %v\n", err)
		return 1
	}
	c := &chat{a: a, o: o, p: newPrinter(stdout, stdout), stderr: stderr, intr: intr}
	if prompt {
		// A terminal on both ends: line editing, history, Markdown.
		if t, ok := openTerminal(in, stdout, a.paths, env, stderr); ok {
			defer t.close()
			c.p, c.input = t.view, t.input
			if t.input != nil {
				c.kept = aboveInput{in: t.input, view: t.view}
			}
		}
	}
	fmt.Fprintf(stderr, "lnk: chatting in %s; /help lists the commands, /quit or the end of input ends it\n", o.thread)
	code := c.run(ctx, in, prompt, stdout)
	if err := a.Close(); err != nil {
		fmt.Fprintf(stderr, "lnk agent chat: stop the agent: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// chat is one session of lnk agent chat.
type chat struct {
	a      *agentConn
	o      chatOptions
	p      chatView
	input  messageInput // the terminal's line editor; nil reads lines of the input
	stderr io.Writer
	intr   <-chan os.Signal // Ctrl-C
	kept   keptView         // where an answer kept while waiting is shown; nil: p
}

// keptView shows an answer kept for the thread that came while the chat
// waited for a message: the view itself on lines of the input, above the
// prompt on a terminal's line editor (aboveInput).
type keptView interface {
	line(format string, args ...any)
	answer(text string)
}

// keptEvery is how often the chat asks the agent for answers kept for
// its thread while it waits for a message (a reminder's, a task's,
// a background command's end): each is shown once it is kept, within
// this, rather than before the owner's next message.
const keptEvery = 2 * time.Second

// errIdle is next's word that keptEvery passed with no message: the chat
// looks for answers kept meanwhile.
var errIdle = errors.New("no message yet")

// messageInput reads the owner's messages one at a time, when asked: io.EOF
// when the owner ends the chat.
type messageInput interface {
	Read() (string, error)
}

// run reads messages from in until /quit or its end, each sent once the
// last one's answer is in.
func (c *chat) run(ctx context.Context, in io.Reader, prompt bool, stdout io.Writer) int {
	var next func() (string, bool, error)
	if c.input != nil {
		next = c.readInput(ctx)
	} else {
		next = c.readLines(ctx, in, prompt, stdout)
	}
	if err := c.showPending(ctx); err != nil {
		fmt.Fprintf(c.stderr, "lnk agent chat: %v\n", err)
		return 1
	}
	for {
		line, ok, err := next()
		if errors.Is(err, errIdle) {
			if err := c.showCame(ctx); err != nil && ctx.Err() == nil {
				fmt.Fprintf(c.stderr, "lnk agent chat: %v\n", err)
			}
			continue
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "lnk agent chat: read a message: %v\n", err)
			return 1
		}
		if !ok {
			return 0
		}
		line = strings.TrimSpace(line)
		switch line {
		case "":
			continue
		case "/quit", "/exit":
			return 0
		case "/help":
			c.help(ctx)
			continue
		}
		if err := c.message(ctx, line); err != nil {
			if ctx.Err() != nil {
				return 0
			}
			fmt.Fprintf(c.stderr, "lnk agent chat: %v\n", err)
			return 1
		}
	}
}

// readLines reads in's lines, each a message, as they come; next waits
// for the next one, after a prompt when prompt says so. ok is false at
// the end of the chat: in's end, Ctrl-C or ctx's end.
func (c *chat) readLines(ctx context.Context, in io.Reader, prompt bool, stdout io.Writer) (next func() (line string, ok bool, err error)) {
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), maxLine)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
	}()
	prompted := false
	return func() (string, bool, error) {
		if prompt && !prompted {
			fmt.Fprint(stdout, "› ")
			prompted = true
		}
		idle := time.NewTimer(keptEvery)
		defer idle.Stop()
		select {
		case <-ctx.Done():
			return "", false, nil
		case <-c.intr:
			return "", false, nil
		case <-idle.C:
			return "", true, errIdle
		case line, ok := <-lines:
			prompted = false
			if !ok {
				return "", false, <-readErr
			}
			return line, true, nil
		}
	}
}

// readInput reads each message from the terminal's line editor once
// asked: it shows the prompt only once the last answer is in.
func (c *chat) readInput(ctx context.Context) (next func() (line string, ok bool, err error)) {
	type read struct {
		line string
		err  error
	}
	var got chan read // the read under way, kept across idle returns
	return func() (string, bool, error) {
		if got == nil {
			got = make(chan read, 1)
			go func(got chan<- read) {
				line, err := c.input.Read()
				got <- read{line, err}
			}(got)
		}
		idle := time.NewTimer(keptEvery)
		defer idle.Stop()
		select {
		case <-ctx.Done():
			return "", false, nil
		case <-c.intr:
			return "", false, nil
		case <-idle.C:
			return "", true, errIdle
		case r := <-got:
			got = nil
			if errors.Is(r.err, io.EOF) {
				return "", false, nil
			}
			return r.line, r.err == nil, r.err
		}
	}
}

// message shows what was kept for the thread, sends text and shows its
// answer: streamed, or, when it joined a running turn, the one that turn
// keeps for it.
func (c *chat) message(ctx context.Context, text string) error {
	if err := c.showPending(ctx); err != nil {
		return err
	}
	c.p.begin()
	x, err := c.a.say(ctx, c.o.thread, text, c.p, c.intr)
	c.p.end()
	switch {
	case x.tooLong:
		c.p.line("[The agent failed: %v. The rest of it wasn't read.]", errTooLong)
		return nil
	case err != nil:
		return err
	case !x.steered:
		return nil
	}
	c.p.line("[Your message joined the turn already running in %s: that turn's answer answers it too.]", c.o.thread)
	// Every answer kept before it was sent has been shown and let go, so
	// the first kept now is the one for it.
	wctx, stop := untilInterrupt(ctx, c.intr) // Ctrl-C stops waiting
	defer stop()
	k, ok, err := c.a.waitPending(wctx, c.o.thread, nil, c.o.wait)
	if err != nil || !ok {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.p.line("[Its answer hasn't come yet; it is shown once it does, before your next message.]")
		return err
	}
	c.showAnswer(k.Text)
	return c.a.letGo(ctx, []string{k.ID})
}

// showAnswer shows a kept answer, or, past what a bridge reads of one,
// that the agent failed.
func (c *chat) showAnswer(text string) {
	if len(text) > maxAnswerRead {
		c.p.line("[The agent failed: %v.]", errTooLong)
		return
	}
	c.p.answer(text)
}

// showCame shows the answers kept for the thread that came while the
// chat waited for a message, where it waits (keptView), and lets each go
// once shown.
func (c *chat) showCame(ctx context.Context) error {
	all, err := c.a.pending(ctx, c.o.thread)
	if err != nil || len(all) == 0 {
		return err
	}
	v := c.kept
	if v == nil {
		v = c.p
	}
	for _, k := range all {
		v.line("[An answer kept for %s while nobody waited:]", c.o.thread)
		if len(k.Text) > maxAnswerRead {
			v.line("[The agent failed: %v.]", errTooLong)
		} else {
			v.answer(k.Text)
		}
		if err := c.a.letGo(ctx, []string{k.ID}); err != nil {
			return err
		}
	}
	return nil
}

// showPending shows the thread's pending answers (kept because their caller
// went), oldest first, and lets each go once shown.
func (c *chat) showPending(ctx context.Context) error {
	all, err := c.a.pending(ctx, c.o.thread)
	if err != nil {
		return err
	}
	for _, k := range all {
		c.p.line("[An answer kept for %s while nobody waited:]", c.o.thread)
		c.showAnswer(k.Text)
		if err := c.a.letGo(ctx, []string{k.ID}); err != nil {
			return err
		}
	}
	return nil
}
