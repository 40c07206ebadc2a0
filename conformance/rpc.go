package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/coder/websocket"
)

// JSON-RPC codes the kit reads.
const (
	codeInvalidParams  = -32602
	codeMethodNotFound = -32601
)

// msg is one JSON-RPC message as it came in a text frame.
type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// isNotification: a method and no id.
func (m msg) isNotification() bool { return m.Method != "" && len(m.ID) == 0 }

// update is a session/update notification's update, as far as the kit
// reads it.
type update struct {
	SessionUpdate string `json:"sessionUpdate"`
	Content       struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	ToolCallID string  `json:"toolCallId"`
	Title      *string `json:"title"`
	Status     string  `json:"status"`
}

// sessionUpdate reads m as a session/update; ok is false for any other
// message.
func (m msg) sessionUpdate() (sessionID string, u update, ok bool) {
	if m.Method != "session/update" || !m.isNotification() {
		return "", u, false
	}
	var p struct {
		SessionID string `json:"sessionId"`
		Update    update `json:"update"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return "", u, false
	}
	return p.SessionID, p.Update, true
}

// rpc is JSON-RPC over a message's WebSocket: one message to a text frame.
type rpc struct {
	ws   *websocket.Conn
	next int
}

func (r *rpc) Close() error { return r.ws.CloseNow() }

// send sends a request and says its id.
func (r *rpc) send(ctx context.Context, method string, params any) (string, error) {
	r.next++
	id := strconv.Itoa(r.next)
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.next, "method": method, "params": params})
	if err != nil {
		return "", fmt.Errorf("send %s: %w", method, err)
	}
	if err := r.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return "", fmt.Errorf("send %s: %w", method, err)
	}
	return id, nil
}

// read reads the next message. A request of the agent's is answered with
// method-not-found (the kit offers the agent nothing), and said too.
func (r *rpc) read(ctx context.Context) (msg, error) {
	typ, b, err := r.ws.Read(ctx)
	if err != nil {
		return msg{}, fmt.Errorf("read: %w", err)
	}
	if typ != websocket.MessageText {
		return msg{}, errors.New("read: a binary frame, not one JSON-RPC message to a text frame")
	}
	var m msg
	if err := json.Unmarshal(b, &m); err != nil {
		return msg{}, fmt.Errorf("read %q: not JSON-RPC: %w", truncate(string(b), 80), err)
	}
	if m.Method != "" && len(m.ID) > 0 {
		reply, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID,
			"error": rpcError{Code: codeMethodNotFound, Message: "the conformance kit offers no " + m.Method}})
		if err := r.ws.Write(ctx, websocket.MessageText, reply); err != nil {
			return msg{}, fmt.Errorf("answer %s: %w", m.Method, err)
		}
	}
	return m, nil
}

// call sends a request and reads up to its response, saying the
// notifications that came before it, in order.
func (r *rpc) call(ctx context.Context, method string, params any) (msg, []msg, error) {
	id, err := r.send(ctx, method, params)
	if err != nil {
		return msg{}, nil, err
	}
	var before []msg
	for {
		m, err := r.read(ctx)
		if err != nil {
			return msg{}, before, fmt.Errorf("%s: %w", method, err)
		}
		if m.Method == "" && string(m.ID) == id {
			return m, before, nil
		}
		before = append(before, m)
	}
}
