package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/lnk-dev/link/contract"
)

// kit runs checks against one target. Every check talks on threads of its
// own, link:conformance-<run>-<check>: a link: thread's answers are left
// kept by a running bridge, so a live bridge takes none of the kit's.
type kit struct {
	t   Target
	run string // this run's random part of its threads
}

func newKit(t Target) *kit {
	var b [4]byte
	rand.Read(b[:])
	return &kit{t: t, run: hex.EncodeToString(b[:])}
}

// thread is a thread of the check's own.
func (k *kit) thread(name string, n int) string {
	return fmt.Sprintf("link:conformance-%s-%s-%d", k.run, name, n)
}

// agentHeaders are the headers that name the target's agent, without the key.
func (k *kit) agentHeaders() http.Header { return headers(nil, k.t.Agent, k.t.AgentID) }

// messageHeaders are a message's upgrade headers: the key and the agent.
func (k *kit) messageHeaders() http.Header { return headers(k.t.Key, k.t.Agent, k.t.AgentID) }

// proved opens a connection and asks the proof as a bridge does before
// it sends the key. Only the proof's answer (200) is required here: whether
// the proof is right is the proof check's alone, so a wrong one fails that
// check and no other.
func (k *kit) proved(ctx context.Context) (*wire, error) {
	w, err := dialWire(ctx, k.t.URL)
	if err != nil {
		return nil, err
	}
	if err := k.proofAnswered(ctx, w, k.agentHeaders()); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// proofAnswered asks a proof of a fresh challenge on w with h, and
// requires it answered 200 with a Link-Proof.
func (k *kit) proofAnswered(ctx context.Context, w *wire, h http.Header) error {
	a, err := w.prove(ctx, contract.NewChallenge(), h)
	if err != nil {
		return err
	}
	if a.status != http.StatusOK {
		return fmt.Errorf("the proof was answered %d (%s), not 200", a.status, quoteBody(a.body))
	}
	if a.header.Get(contract.HeaderProof) == "" {
		return errors.New("the proof was answered 200 with no Link-Proof")
	}
	return nil
}

// verify says whether a is the right proof of challenge.
func (k *kit) verify(a answer, challenge string) error {
	if a.status != http.StatusOK {
		return fmt.Errorf("the proof was answered %d (%s), not 200", a.status, quoteBody(a.body))
	}
	got := a.header.Get(contract.HeaderProof)
	if got == "" {
		return errors.New("the proof was answered 200 with no Link-Proof")
	}
	if !contract.VerifyProof(k.t.Key, challenge, got) {
		return fmt.Errorf("Link-Proof %q is not the HMAC-SHA256 of the challenge under the key, in lowercase hex", truncate(got, 80))
	}
	return nil
}

// opened is a message's WebSocket, initialized and its thread resumed.
type opened struct {
	w *wire
	r *rpc
}

func (o *opened) Close() {
	o.r.Close()
	o.w.Close()
}

// open opens a message's WebSocket as a bridge does: proof, upgrade with
// the key, initialize, session/resume of thread.
func (k *kit) open(ctx context.Context, thread string) (*opened, error) {
	w, err := k.proved(ctx)
	if err != nil {
		return nil, err
	}
	r, _, err := w.upgrade(ctx, k.messageHeaders())
	if err != nil {
		w.Close()
		return nil, err
	}
	o := &opened{w: w, r: r}
	if err := k.begin(ctx, r, thread); err != nil {
		o.Close()
		return nil, err
	}
	return o, nil
}

// begin sends initialize and session/resume of thread.
func (k *kit) begin(ctx context.Context, r *rpc, thread string) error {
	init, _, err := r.call(ctx, "initialize", map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
		},
		"clientInfo": map[string]string{"name": "lnk-conformance", "version": "1"},
	})
	if err != nil {
		return err
	}
	if init.Error != nil {
		return fmt.Errorf("initialize: %w", init.Error)
	}
	var ir struct {
		ProtocolVersion *int `json:"protocolVersion"`
	}
	if json.Unmarshal(init.Result, &ir) != nil || ir.ProtocolVersion == nil {
		return fmt.Errorf("initialize: answered %s, with no protocolVersion", truncate(string(init.Result), 120))
	}
	res, _, err := r.call(ctx, "session/resume", map[string]any{"sessionId": thread, "cwd": "/", "mcpServers": []any{}})
	if err != nil {
		return err
	}
	if res.Error != nil {
		return fmt.Errorf("session/resume of %s: %w", thread, res.Error)
	}
	return nil
}

// exchange is one message's prompt and all that answered it.
type exchange struct {
	thread   string
	response msg   // the prompt's response
	updates  []msg // what came between the prompt and its response, in order
}

// promptParams are session/prompt's params: the text alone, and meta as
// its _meta when not nil.
func promptParams(thread, text string, meta json.RawMessage) map[string]any {
	p := map[string]any{
		"sessionId": thread,
		"prompt":    []map[string]string{{"type": "text", "text": text}},
	}
	if meta != nil {
		p["_meta"] = meta
	}
	return p
}

// message sends one message on a connection of its own and reads its
// answer to the prompt's response.
func (k *kit) message(ctx context.Context, thread, text string, meta json.RawMessage) (*exchange, error) {
	o, err := k.open(ctx, thread)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	resp, between, err := o.r.call(ctx, "session/prompt", promptParams(thread, text, meta))
	if err != nil {
		return nil, err
	}
	return &exchange{thread: thread, response: resp, updates: between}, nil
}

// answered checks the exchange ended in a prompt's result, not an error.
func (e *exchange) answered() error {
	if e.response.Error != nil {
		return fmt.Errorf("the prompt was answered with %v", e.response.Error)
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if json.Unmarshal(e.response.Result, &r) != nil || r.StopReason == "" {
		return fmt.Errorf("the prompt's result %s has no stopReason", truncate(string(e.response.Result), 120))
	}
	return nil
}

// chunks are the exchange's agent_message_chunks' texts, in order.
func (e *exchange) chunks() []string {
	var out []string
	for _, m := range e.updates {
		if _, u, ok := m.sessionUpdate(); ok && u.SessionUpdate == "agent_message_chunk" {
			out = append(out, u.Content.Text)
		}
	}
	return out
}

// describe lists what came, for a result that says what was seen.
func describe(ms []msg) string {
	if len(ms) == 0 {
		return "nothing"
	}
	var parts []string
	for _, m := range ms {
		switch {
		case m.Method == "session/update":
			_, u, _ := m.sessionUpdate()
			parts = append(parts, u.SessionUpdate)
		case m.Method != "":
			parts = append(parts, m.Method)
		case m.Error != nil:
			parts = append(parts, fmt.Sprintf("error %d", m.Error.Code))
		default:
			parts = append(parts, "response")
		}
	}
	return strings.Join(parts, ", ")
}

func quoteBody(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "no body"
	}
	return fmt.Sprintf("%q", truncate(s, 80))
}
