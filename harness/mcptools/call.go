package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/redact"
	"github.com/lnk-dev/link/model"
)

// The keys of what a call carries beside its arguments, in its _meta.
const (
	MetaThread = "link.local/thread" // the conversation it's made in
	MetaHops   = "link.local/hops"   // the hops of the message being answered
	MetaTools  = "link.local/tools"  // the tools the conversation has this turn
	MetaModel  = "link.local/model"  // the model the conversation runs on
	MetaSpec   = "link.local/spec"   // the called tool's table of the agent's spec
)

// maxAnswerText bounds the text made of one answer: twice the most the
// harness keeps (harness.MaxToolAnswer, 32 KiB), which cuts it, saying so
// (TestBoundsMatchHarness holds the two together).
const maxAnswerText = 64 << 10

// Call makes one call of agent's, answering its text and whether it
// failed. A call to a tool the conversation isn't offered (not one of the
// agent's, or narrowed away) is answered as one there isn't and never
// made; a tool that can't be started is answered as unavailable. The
// call carries meta in its _meta (MetaThread and the rest).
func (t *Tools) Call(ctx context.Context, agent string, c model.ToolCall, meta contract.CallMeta) (string, bool) {
	a, srv := t.prepare(ctx, agent)
	tool, callName, ok := strings.Cut(c.Name, "__")
	target, found := serverNamed(srv, tool)
	if !ok || !found || !contract.Allowed(meta.Tools, c.Name) {
		return noSuchTool(c.Name), true
	}
	a.mu.Lock()
	l, known := a.listingOf(target)
	a.mu.Unlock()
	if known && !l.has(callName) {
		return noSuchTool(c.Name), true
	}
	args := json.RawMessage(strings.TrimSpace(c.Input))
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return "The arguments of " + c.Name + " are not a JSON object, so it wasn't called.", true
	}
	params := &mcp.CallToolParams{Name: callName, Arguments: args}
	res, failure := t.call(ctx, agent, a, target, meta, params)
	if res == nil {
		if ctx.Err() != nil {
			return "The call was stopped: its turn ended before " + c.Name + " answered.", true
		}
		return failure, true
	}
	return answerText(res), res.IsError
}

// serverNamed is the server of srv named name.
func serverNamed(srv []server, name string) (server, bool) {
	for _, s := range srv {
		if s.name == name {
			return s, true
		}
	}
	return server{}, false
}

// has says whether l lists a call named name.
func (l listing) has(name string) bool {
	for _, c := range l.Calls {
		if c.Name == name {
			return true
		}
	}
	return false
}

// call makes params's call on a session of srv's, starting one as
// needed, answering its result or, with none, what the model is told
// instead. The session's list says whether the call is still there, and
// meta, with the tools offered now, goes as its _meta. A session the
// server no longer has (it said so before taking the call) is started
// again and the call made there, once: a call the server may have taken
// is never made twice.
func (t *Tools) call(ctx context.Context, agent string, a *agentTools, srv server, meta contract.CallMeta, params *mcp.CallToolParams) (*mcp.CallToolResult, string) {
	name := offered(srv.name, params.Name)
	for try := 0; ; try++ {
		s, err := t.acquire(ctx, agent, a, srv, meta.Thread)
		if err != nil {
			return nil, unavailable(srv, err)
		}
		a.mu.Lock()
		l, _ := a.listingOf(srv)
		offer := a.offer(a.current, meta.Tools)
		a.mu.Unlock()
		if !l.has(params.Name) {
			t.release(a, s)
			return nil, noSuchTool(name)
		}
		params.Meta = callMeta(srv.name, offer, meta)
		t.mu.Lock()
		closed := t.closed
		if !closed {
			t.calls.Add(1)
		}
		t.mu.Unlock()
		if closed {
			t.release(a, s)
			return nil, unavailable(srv, fmt.Errorf("call %s: %w", name, errClosed))
		}
		cctx, unbind := t.bound(ctx)
		res, err := s.cs.CallTool(cctx, params)
		t.calls.Done()
		if err != nil && ctx.Err() == nil && errors.Is(context.Cause(cctx), errClosed) {
			err = fmt.Errorf("call %s: %w", name, errClosed)
		}
		unbind()
		if err != nil {
			// A session that failed isn't used again.
			a.mu.Lock()
			a.retire(s)
			a.mu.Unlock()
		}
		t.release(a, s)
		switch {
		case err == nil:
			return res, ""
		case errors.Is(err, mcp.ErrSessionMissing) && try == 0:
			continue
		}
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && !transportCode(rpc.Code) {
			return nil, name + " answered with an error: " + redact.Address(rpc.Message, srv.addr)
		}
		// The session failed under the call: whether it ran isn't known,
		// and it isn't made again.
		return nil, unavailable(srv, err)
	}
}

// transportCode says whether a JSON-RPC error's code is the go-sdk's own
// for a call its transport couldn't carry (rejected, closing, unknown),
// rather than the server's answer.
func transportCode(code int64) bool {
	switch code {
	case -32001, -32003, -32004, -32005:
		return true
	}
	return false
}

// unavailable says a tool can't be reached now, and why, without its
// address.
func unavailable(srv server, err error) string {
	return "The tool " + srv.name + " is unavailable: " + redact.Address(err.Error(), srv.addr) + ". Go on without it, or try it later."
}

// hasTool says whether offer has a tool named name.
func hasTool(offer []model.Tool, name string) bool {
	for _, o := range offer {
		if o.Name == name {
			return true
		}
	}
	return false
}

// callMeta is a call's _meta: the conversation, the hops, the tools it
// has this turn, its model, and, when the message's firing gave the
// tools, the called tool's table of the spec.
func callMeta(tool string, offer []model.Tool, meta contract.CallMeta) mcp.Meta {
	names := make([]string, len(offer))
	for i, o := range offer {
		names[i] = o.Name
	}
	m := mcp.Meta{MetaThread: meta.Thread, MetaHops: meta.Hops, MetaTools: names}
	if meta.Model != "" {
		m[MetaModel] = meta.Model
	}
	if spec, ok := meta.Specs[tool]; ok && len(spec) > 0 {
		m[MetaSpec] = spec
	}
	return m
}

// noSuchTool is the answer of a call to a tool the conversation isn't
// offered, as the harness answers one.
func noSuchTool(name string) string {
	return "There is no tool " + name + " in this conversation."
}

// answerText is a tool's answer as text for the model: its content,
// each part on its own, what isn't text said in brackets; a result with
// only structured content is that, as JSON. It stops past maxAnswerText.
func answerText(res *mcp.CallToolResult) string {
	var b strings.Builder
	add := func(s string) {
		if b.Len() >= maxAnswerText {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if room := maxAnswerText - b.Len(); len(s) > room {
			s = s[:room]
		}
		b.WriteString(s)
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			add(c.Text)
		case *mcp.ImageContent:
			add(fmt.Sprintf("[an image, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			add(fmt.Sprintf("[audio, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			add(fmt.Sprintf("[a resource: %s %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
			case r.Text != "":
				add(r.Text)
			default:
				add(fmt.Sprintf("[a resource: %s, %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob)))
			}
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			add(string(j))
		}
	}
	return b.String()
}
