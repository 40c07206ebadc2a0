package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lnk-dev/link/acp"
)

// Action is one action of Link's namespaces, as its plugin's
// actions.toml says (docs/actions.md): /<namespace>:<name>, or one of its
// aliases (/new), goes to a harness by the first of Names it offers; an
// action of a namespace Link owns has a Route instead, run by the hub.
type Action struct {
	Namespace   string   // chat
	Name        string   // create: the command /chat:create
	Aliases     []string // new: the command /new
	Names       []string // clear, new: the names a harness may offer it by, in order
	Description string
	Hint        string // what follows the name, when it takes text
	Route       string // a Link-owned action's: what runs it (task__list), for Config.Route
	// NewSession lets the thread's session go once the harness has
	// answered the action by a name it offers: the thread's next message
	// begins a new session. A harness may go on in a session of its own
	// after it that its old id doesn't name (Claude Code's /clear), so
	// the old one, taken up after a restart, would hold what was cleared.
	NewSession bool
}

// command is the action's command name, without the slash.
func (a *Action) command() string { return a.Namespace + ":" + a.Name }

// RouteFunc runs a Link-owned action's route for thread with the text
// after the command, and returns its answer's text.
type RouteFunc func(ctx context.Context, route, thread, args string) (string, error)

// ownedCommand is a Link-owned action as listed to a bridge.
type listedCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *commandInput `json:"input,omitempty"`
}

type commandInput struct {
	Hint string `json:"hint"`
}

// owned lists the Link-owned actions, as added to the harness's list.
func (hb *Hub) owned() []json.RawMessage {
	var out []json.RawMessage
	for i := range hb.cfg.Actions {
		a := &hb.cfg.Actions[i]
		if a.Route == "" {
			continue
		}
		c := listedCommand{Name: a.command(), Description: a.Description}
		if a.Hint != "" {
			c.Input = &commandInput{Hint: a.Hint}
		}
		b, _ := json.Marshal(c)
		out = append(out, b)
	}
	return out
}

// parsed is a prompt that is one command of the owner's.
type parsed struct {
	word   string  // as typed, without the slash
	rest   string  // what follows it, "" for nothing
	action *Action // the action it names, nil for none
}

// maxCommand bounds a prompt read as a command: one past it is sent as
// it came, never read twice to find that it isn't one.
const maxCommand = 64 << 10

// parseCommand reads a prompt that is one command: text blocks alone,
// whose whole text (space around it aside) starts with a slash. ok is
// false for any other prompt.
func (hb *Hub) parseCommand(prompt json.RawMessage) (p parsed, ok bool) {
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(prompt, &blocks) != nil || len(blocks) != 1 || blocks[0].Type != "text" {
		return parsed{}, false
	}
	text := strings.TrimSpace(blocks[0].Text)
	if !strings.HasPrefix(text, "/") || len(text) < 2 {
		return parsed{}, false
	}
	word, rest, _ := strings.Cut(text[1:], " ")
	if word == "" || strings.ContainsAny(word, "\n\t") {
		return parsed{}, false
	}
	p = parsed{word: word, rest: strings.TrimSpace(rest)}
	for i := range hb.cfg.Actions {
		a := &hb.cfg.Actions[i]
		if a.command() == word {
			p.action = a
			break
		}
		for _, al := range a.Aliases {
			if al == word {
				p.action = a
			}
		}
		if p.action != nil {
			break
		}
	}
	return p, true
}

// commandNames reads an availableCommands list's names.
func commandNames(list json.RawMessage) map[string]bool {
	var cmds []struct {
		Name string `json:"name"`
	}
	json.Unmarshal(list, &cmds)
	out := make(map[string]bool, len(cmds))
	for _, c := range cmds {
		out[strings.TrimPrefix(c.Name, "/")] = true
	}
	return out
}

// errNoCommands says the session listed no commands in time.
var errNoCommands = errors.New("the harness listed no commands")

// commands waits for session's latest command list, at most the call
// timeout, the harness's end or ctx's.
func (h *harness) commandList(ctx context.Context, session string) (json.RawMessage, error) {
	h.mu.Lock()
	list, ok := h.commands[session]
	var ch chan struct{}
	if !ok {
		ch = h.listed[session]
		if ch == nil {
			ch = make(chan struct{})
			h.listed[session] = ch
		}
	}
	h.mu.Unlock()
	if ok {
		return list, nil
	}
	t := time.NewTimer(h.hb.cfg.CallTimeout)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
		return nil, fmt.Errorf("%w within %s, so the command was not sent", errNoCommands, h.hb.cfg.CallTimeout)
	case <-h.ended:
		return nil, h.endedErr(acp.ErrClosed)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.commands[session], nil
}

// rename is the name a command of the owner's goes to the harness by: as
// typed when the harness offers it; else, for an action of Link's, the
// first of its names the harness offers; else as typed.
func rename(p parsed, offered map[string]bool) string {
	if offered[p.word] || p.action == nil {
		return p.word
	}
	for _, n := range p.action.Names {
		if offered[n] {
			return n
		}
	}
	if offered[p.action.command()] {
		return p.action.command()
	}
	return p.word
}

// commandPrompt is a one-block prompt holding /name and rest.
func commandPrompt(prompt json.RawMessage, name, rest string) ([]byte, error) {
	var blocks []json.RawMessage
	if err := json.Unmarshal(prompt, &blocks); err != nil || len(blocks) != 1 {
		return nil, fmt.Errorf("command prompt: %v", err)
	}
	text := "/" + name
	if rest != "" {
		text += " " + rest
	}
	b, err := setMember(blocks[0], "text", appendString(nil, text))
	if err != nil {
		return nil, err
	}
	return append(append([]byte{'['}, b...), ']'), nil
}

// withOwned is an available_commands_update's params with Link's owned
// actions added to its list (those the harness lists itself aside).
func (hb *Hub) withOwned(params []byte) []byte {
	owned := hb.owned()
	if len(owned) == 0 {
		return params
	}
	var p struct {
		Update json.RawMessage `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil {
		return params
	}
	var u struct {
		Commands []json.RawMessage `json:"availableCommands"`
	}
	if json.Unmarshal(p.Update, &u) != nil {
		return params
	}
	names := commandNames(mustArray(u.Commands))
	for _, o := range owned {
		var c listedCommand
		json.Unmarshal(o, &c)
		if !names[c.Name] {
			u.Commands = append(u.Commands, o)
		}
	}
	update, err := setMember(p.Update, "availableCommands", mustArray(u.Commands))
	if err != nil {
		return params
	}
	out, err := setMember(params, "update", update)
	if err != nil {
		return params
	}
	return out
}

// mustArray joins raw values into a JSON array.
func mustArray(items []json.RawMessage) []byte {
	b := []byte{'['}
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, ']')
}
