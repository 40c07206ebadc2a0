package reference

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/conformance"
	"github.com/lnk-dev/link/contract"
)

// The reference agent's script: the words that make it call a tool or
// answer only once its caller has gone, and the tools it offers.
const (
	ToolPrompt    = "conformance: call memory__search"
	RecoverPrompt = "conformance: answer once the caller has gone"
	CalledTool    = "memory__search"
	ModelName     = "scripted-1"
)

// Tools are the tools the reference agent offers its model.
var Tools = []string{"memory__search", "memory__write", "web__fetch"}

// callerWait bounds how long a RecoverPrompt turn waits for its caller to
// go before it answers anyway.
const callerWait = 10 * time.Second

// Agent is the scripted reference agent: it answers with chunks, calls
// memory__search when told to, keeps each conversation's narrowed tools
// in memory, keeps the answers nobody took for _link/recover, and records
// what its model was given.
type Agent struct {
	mu      sync.Mutex
	tools   map[key]*[]string                     // kept per conversation; nil: never narrowed
	seen    map[key][]conformance.ModelCall       // what the model was given
	waiting map[string][]contract.RecoveredAnswer // per agent, answers nobody took
}

type key struct{ agent, thread string }

// NewAgent makes an agent that remembers nothing yet.
func NewAgent() *Agent {
	return &Agent{
		tools:   map[key]*[]string{},
		seen:    map[key][]conformance.ModelCall{},
		waiting: map[string][]contract.RecoveredAnswer{},
	}
}

// prompt answers one prompt of a connection; gone is closed once that
// connection has ended.
func (a *Agent) prompt(ctx context.Context, p acp.Prompt, s acp.Stream, gone <-chan struct{}) (acp.Outcome, error) {
	text := textOf(p.Blocks)
	offered := a.narrow(p)
	a.record(p, text, offered)
	if err := s.Taken(ctx); err != nil {
		return acp.Outcome{}, err
	}
	var answer string
	switch {
	case strings.Contains(text, RecoverPrompt):
		select {
		case <-gone:
		case <-ctx.Done():
			return acp.Outcome{}, ctx.Err()
		case <-time.After(callerWait):
		}
		answer = "answered once its caller had gone"
	case strings.Contains(text, ToolPrompt) && slices.Contains(offered, CalledTool):
		id := "call-" + newID()
		s.ToolCall(ctx, id, CalledTool, nil)
		s.ToolCallUpdate(ctx, id, "completed", nil)
		answer = "searched memory and found nothing"
	default:
		answer = "heard: " + truncate(text, 48)
	}
	// The answer in two chunks; a caller gone by its end never had it.
	half := len(answer) / 2
	err1 := s.Chunk(ctx, answer[:half])
	err2 := s.Chunk(ctx, answer[half:])
	select {
	case <-gone:
		a.keep(p.Agent, p.Thread, answer)
	default:
		if err1 != nil || err2 != nil {
			a.keep(p.Agent, p.Thread, answer)
		}
	}
	return acp.Outcome{StopReason: "end_turn"}, nil
}

// narrow keeps the conversation's tools, narrowed by the message's list,
// and says those the model is offered this turn (the connection's
// Link-Tools narrowing them further).
func (a *Agent) narrow(p acp.Prompt) []string {
	k := key{p.Agent, p.Thread}
	a.mu.Lock()
	kept := contract.Narrow(a.tools[k], p.Link.Tools)
	a.tools[k] = kept
	a.mu.Unlock()
	offered := []string{}
	for _, t := range Tools {
		if contract.Allowed(kept, t) && contract.Allowed(p.Tools, t) {
			offered = append(offered, t)
		}
	}
	return offered
}

// record keeps what the model is given: who speaks, and the message.
func (a *Agent) record(p acp.Prompt, text string, offered []string) {
	speaker := "the owner"
	if p.Link.From != "" {
		speaker = fmt.Sprintf("%s (%s), %d hops", p.Link.From, p.Link.FromName, p.Link.Hops)
	}
	call := conformance.ModelCall{Text: "speaking: " + speaker + "\n" + text, Tools: offered}
	a.mu.Lock()
	k := key{p.Agent, p.Thread}
	a.seen[k] = append(a.seen[k], call)
	a.mu.Unlock()
}

// keep keeps an answer nobody took, for _link/recover.
func (a *Agent) keep(agent, thread, text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.waiting[agent] = append(a.waiting[agent], contract.RecoveredAnswer{ID: newID(), Thread: thread, Text: text})
}

// Recover answers _link/recover: the single phase hands each answer over
// once; the two-phase form hands them over with ids until done lets them
// go, an unknown id passed over.
func (a *Agent) Recover(ctx context.Context, agent string, p contract.RecoverParams) (contract.RecoverResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	res := contract.RecoverResult{Answers: []contract.RecoveredAnswer{}}
	list := a.waiting[agent]
	switch {
	case len(p.Done) > 0:
		kept := list[:0]
		for _, ans := range list {
			if !slices.Contains(p.Done, ans.ID) {
				kept = append(kept, ans)
			}
		}
		a.waiting[agent] = kept
	case p.TwoPhase:
		res.Answers = append(res.Answers, list...)
	default:
		for _, ans := range list {
			ans.ID = ""
			res.Answers = append(res.Answers, ans)
		}
		delete(a.waiting, agent)
	}
	return res, nil
}

// Recorder is the recording model of one of the agent's agents.
func (a *Agent) Recorder(agent string) conformance.Recorder { return recorder{a, agent} }

type recorder struct {
	a     *Agent
	agent string
}

func (r recorder) Seen(ctx context.Context, thread string) ([]conformance.ModelCall, error) {
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	return slices.Clone(r.a.seen[key{r.agent, thread}]), nil
}

// connAgent is the agent as one connection's acp.Serve drives it, knowing
// when that connection ends.
type connAgent struct {
	a    *Agent
	gone <-chan struct{}
}

func (c connAgent) Prompt(ctx context.Context, p acp.Prompt, s acp.Stream) (acp.Outcome, error) {
	return c.a.prompt(ctx, p, s, c.gone)
}

func (c connAgent) Recover(ctx context.Context, agent string, p contract.RecoverParams) (contract.RecoverResult, error) {
	return c.a.Recover(ctx, agent, p)
}

func textOf(blocks []acp.Block) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
