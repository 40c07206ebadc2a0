package acp

import (
	"context"
	"encoding/json"
)

// UpdateAvailableCommands is the session/update that lists the commands a
// session takes (ACP's available_commands_update).
const UpdateAvailableCommands = "available_commands_update"

// Command is one command an agent takes, as ACP's availableCommands lists
// it: its name without the slash (model:set), what it does, and, when it
// takes text after its name, a hint of that text.
type Command struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *CommandInput `json:"input,omitempty"`
}

// CommandInput is a command's unstructured input: the text typed after
// its name, hinted at until it is typed.
type CommandInput struct {
	Hint string `json:"hint"`
}

// Commander is an Agent that takes commands of its own. Serve lists them
// in one available_commands_update of the session, right after it answers
// session/new, session/load or session/resume.
type Commander interface {
	// Commands are agent's commands, in the order they are listed.
	Commands(agent string) []Command
}

// commandsUpdate is available_commands_update's update.
type commandsUpdate struct {
	SessionUpdate     string    `json:"sessionUpdate"`
	AvailableCommands []Command `json:"availableCommands"`
}

// commandsMessage is the available_commands_update that lists thread's
// session the agent's commands, nil when it is no Commander.
func (s *server) commandsMessage(thread string) (*Message, error) {
	c, ok := s.a.(Commander)
	if !ok {
		return nil, nil
	}
	cmds := c.Commands(s.agent)
	if cmds == nil {
		cmds = []Command{}
	}
	params, err := json.Marshal(struct {
		SessionID string         `json:"sessionId"`
		Update    commandsUpdate `json:"update"`
	}{thread, commandsUpdate{SessionUpdate: UpdateAvailableCommands, AvailableCommands: cmds}})
	if err != nil {
		return nil, err
	}
	return &Message{Method: MethodSessionUpdate, Params: params}, nil
}

// opened answers r, a request that opened thread's session, with result,
// and lists the session the agent's commands right after, in the same
// write (a Batcher's); a write that fails is the connection's end, which
// its read loop meets.
func (s *server) opened(ctx context.Context, r *Request, result any, thread string) {
	cmds, err := s.commandsMessage(thread)
	if err != nil || cmds == nil {
		r.Reply(ctx, result)
		return
	}
	r.replyThen(ctx, result, cmds)
}
