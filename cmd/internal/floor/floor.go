// Package floor is what Link's throughput is set beside: a server of the
// endpoint contract's proof, upgrade and one message's frames over bare
// WebSockets, answering at once, with no endpoint, acp, store or model
// code (lnk measure's floor-server, cmd/internal/serve's
// BenchmarkConnection). What it costs is the least any harness could
// cost on the machine.
package floor

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/coder/websocket"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// Handler answers the floor's paths: /health, the proof of key, and
// the upgrade, its connection answered by hand (floorConn).
func Handler(key []byte) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(contract.HealthPath, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc(contract.ProofPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(contract.HeaderProof, contract.Proof(key, r.Header.Get(contract.HeaderChallenge)))
	})
	mux.HandleFunc(contract.ACPPath, func(w http.ResponseWriter, r *http.Request) {
		if !contract.KeyMatches(key, r.Header.Get(contract.HeaderAuthorization)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer c.CloseNow()
		floorConn(r.Context(), c)
	})
	return mux
}

// floorConn answers one connection's requests until its client closes it.
func floorConn(ctx context.Context, c *websocket.Conn) {
	write := func(v any) error {
		b, _ := json.Marshal(v)
		return c.Write(ctx, websocket.MessageText, b)
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				SessionID string      `json:"sessionId"`
				Prompt    []acp.Block `json:"prompt"`
			} `json:"params"`
		}
		if json.Unmarshal(b, &req) != nil {
			return
		}
		type result struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  any             `json:"result"`
		}
		type note struct {
			JSONRPC string `json:"jsonrpc"`
			Method  string `json:"method"`
			Params  any    `json:"params"`
		}
		switch req.Method {
		case acp.MethodInitialize:
			err = write(result{"2.0", req.ID, map[string]any{"protocolVersion": acp.ProtocolVersion, "agentCapabilities": map[string]any{"loadSession": true}, "authMethods": []any{}}})
		case acp.MethodSessionPrompt:
			s := req.Params.SessionID
			err = write(note{"2.0", contract.MethodTaken, contract.TakenParams{SessionID: s}})
			if err == nil {
				err = write(note{"2.0", acp.MethodSessionUpdate, map[string]any{"sessionId": s, "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "[offline model] " + acp.TextOf(req.Params.Prompt)}}}})
			}
			if err == nil {
				err = write(result{"2.0", req.ID, map[string]any{"stopReason": "end_turn"}})
			}
		default:
			err = write(result{"2.0", req.ID, map[string]any{}})
		}
		if err != nil {
			return
		}
	}
}
