package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lnk-dev/link/contract"
)

// Target is an endpoint the kit checks, and the hooks it offers. URL and
// Key are all a target must give; each other field is a hook some checks
// need, and a check whose hook is missing is not run (never passed).
type Target struct {
	// URL is the endpoint's ACP address: http://127.0.0.1:18800/acp.
	URL string
	// Key is the agent's endpoint key, as contract.ParseKey reads it.
	Key []byte
	// Agent is the agent Link-Agent names ("" names none).
	Agent string
	// AgentID, for an endpoint answering for more than one owner's agents,
	// is the agent's ID, sent as Link-Agent-Id. Needed by routing-id.
	AgentID string
	// Nameless says a connection naming no agent is answered as Agent's,
	// the process's own (LNK_AGENT). Needed by routing-default.
	Nameless bool
	// Shared is a name two owners' agents share at this endpoint. Needed by
	// routing-shared.
	Shared string

	// PID is the process that accepts the endpoint's connections, whose
	// socket the kit reads TCP_NODELAY from: os.Getpid() for a server in
	// the test's own process. Needed by tcp-nodelay.
	PID int

	// ToolCall is a message that makes the agent call a tool. Needed by
	// tool-call.
	ToolCall *ToolCall
	// Model records what the agent's model is given. Needed to prove a
	// refused _meta.link reached no model (the meta-* checks) and by
	// tools-narrow.
	Model Recorder
	// Tools are two or more of the tools the agent offers its model, by the
	// names the harness offers them by. Needed by tools-narrow.
	Tools []string
	// ModelName is a model the agent can run, for the accepted message the
	// meta-model check sends beside its refused one; when empty that
	// message carries no model.
	ModelName string
	// Recover is a message whose turn ends only after its caller has gone,
	// leaving an answer for _link/recover. Needed by recover and
	// recover-two-phase.
	Recover *Recover

	// Timeout bounds each check; 10 seconds when zero.
	Timeout time.Duration
}

// ToolCall is the hook that makes the agent call a tool.
type ToolCall struct {
	// Prompt is a message whose turn calls Tool: a scripted model that
	// calls it on these words will do.
	Prompt string
	// Tool is the tool's name as the harness offers it (memory__search),
	// the title its tool_call must carry.
	Tool string
}

// Recover is the hook that leaves an answer nobody took.
type Recover struct {
	// Prompt is a message whose turn ends only once its caller has gone:
	// the kit sends it, waits for _link/taken, and closes the connection,
	// and the harness finishes the turn in a task of its own.
	Prompt string
}

// Recorder is the target's recording model: it says what the agent's
// model was given.
type Recorder interface {
	// Seen says what the model was given in thread's conversation, one
	// ModelCall per call of the model, oldest first.
	Seen(ctx context.Context, thread string) ([]ModelCall, error)
}

// ModelCall is what one call of the model was given.
type ModelCall struct {
	// Text is all it was given, in any form that holds the words of the
	// messages it saw: a provider request's body will do.
	Text string
	// Tools are the names of the tools it was offered.
	Tools []string
}

// validate checks what every check needs.
func (t Target) validate() error {
	if _, err := parseEndpoint(t.URL); err != nil {
		return err
	}
	if len(t.Key) == 0 {
		return errors.New("target: a key is needed")
	}
	if t.Agent != "" {
		if err := contract.CheckAgentName(t.Agent); err != nil {
			return fmt.Errorf("target: %w", err)
		}
	}
	if t.ToolCall != nil && (t.ToolCall.Prompt == "" || t.ToolCall.Tool == "") {
		return errors.New("target: a tool call hook names its prompt and its tool")
	}
	if t.Recover != nil && t.Recover.Prompt == "" {
		return errors.New("target: a recover hook names its prompt")
	}
	return nil
}

func (t Target) timeout() time.Duration {
	if t.Timeout > 0 {
		return t.Timeout
	}
	return 10 * time.Second
}
