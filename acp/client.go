package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/lnk-dev/link/contract"
)

// Client is the client side of one message's connection, as Link's bridge
// and lnk agent chat speak it: initialize, session/resume of the thread,
// session/prompt, and _link/recover. What the agent streams (session/update,
// _link/taken) goes to the OnNotify callback, in order, each before the
// response that follows it.
type Client struct {
	conn *Conn
	wg   sync.WaitGroup
	err  error
}

// NewClient starts a client over f. onNotify, when not nil, is called on
// the read loop with each notification's method and raw params; it must
// not block long. Requests from the agent (permissions, files) are
// answered method-not-found.
func NewClient(ctx context.Context, f Framer, onNotify func(method string, params json.RawMessage)) *Client {
	c := &Client{}
	c.conn = NewConn(f, func(ctx context.Context, r *Request) {
		if r.IsNotification() {
			if onNotify != nil {
				onNotify(r.Method, r.Params)
			}
			return
		}
		r.Fail(ctx, Errorf(CodeMethodNotFound, "method %q not found", truncate(r.Method, 64)))
	})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.err = c.conn.Run(ctx)
	}()
	return c
}

// Conn is the JSON-RPC peer under c, for requests Client has no method for.
func (c *Client) Conn() *Conn { return c.conn }

// initializeParams are initialize's params, the same for every
// connection: encoded once.
var initializeParams = func() json.RawMessage {
	b, err := json.Marshal(map[string]any{
		"protocolVersion":    ProtocolVersion,
		"clientCapabilities": map[string]any{},
		"clientInfo":         map[string]any{"name": "link", "version": "1"},
	})
	if err != nil {
		panic(err)
	}
	return b
}()

// resumeParams are session/resume's params.
type resumeParams struct {
	SessionID  string      `json:"sessionId"`
	Cwd        string      `json:"cwd"`
	MCPServers [0]struct{} `json:"mcpServers"`
}

// Initialize sends initialize and returns the agent's answer.
func (c *Client) Initialize(ctx context.Context) (InitializeResult, error) {
	var res InitializeResult
	raw, err := c.conn.Call(ctx, MethodInitialize, initializeParams)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("initialize: decode answer: %w", err)
	}
	return res, nil
}

// Resume sends session/resume of thread's session.
func (c *Client) Resume(ctx context.Context, thread string) error {
	_, err := c.conn.Call(ctx, MethodSessionResume, &resumeParams{SessionID: thread, Cwd: "/"})
	return err
}

// Prompt sends session/prompt of blocks to thread's session, with meta
// (raw, nil for none) as its _meta, and waits for the turn's answer.
func (c *Client) Prompt(ctx context.Context, thread string, blocks []Block, meta json.RawMessage) (PromptResult, error) {
	params := struct {
		SessionID string          `json:"sessionId"`
		Prompt    []Block         `json:"prompt"`
		Meta      json.RawMessage `json:"_meta,omitempty"`
	}{thread, blocks, meta}
	var res PromptResult
	raw, err := c.conn.Call(ctx, MethodSessionPrompt, params)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("prompt: decode answer: %w", err)
	}
	return res, nil
}

// Cancel sends session/cancel for thread's session.
func (c *Client) Cancel(ctx context.Context, thread string) error {
	return c.conn.Notify(ctx, MethodSessionCancel, map[string]string{"sessionId": thread})
}

// Recover sends _link/recover with p.
func (c *Client) Recover(ctx context.Context, p contract.RecoverParams) (contract.RecoverResult, error) {
	var res contract.RecoverResult
	raw, err := c.conn.Call(ctx, contract.MethodRecover, p)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("recover: decode answer: %w", err)
	}
	return res, nil
}

// Close closes the connection and waits for the read loop: nil when it
// ended cleanly.
func (c *Client) Close() error {
	cerr := c.conn.Close()
	c.wg.Wait()
	if c.err != nil {
		return c.err
	}
	return cerr
}

// TextOf joins the text of a prompt's text blocks.
func TextOf(blocks []Block) string {
	var n int
	for _, b := range blocks {
		if b.Type == "text" {
			n += len(b.Text)
		}
	}
	out := make([]byte, 0, n)
	for _, b := range blocks {
		if b.Type == "text" {
			out = append(out, b.Text...)
		}
	}
	return string(out)
}
