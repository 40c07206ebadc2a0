package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"
	"github.com/spf13/cobra"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

func (m *Main) floorServerCmd() *cobra.Command {
	var keyFile string
	var port int
	c := &cobra.Command{
		Use:    "floor-server --key-file KEY",
		Short:  "the floor lnk measure sets its times beside: the contract's proof, upgrade and one message's frames over bare WebSockets (started by lnk measure)",
		Hidden: true,
		Args:   noWords,
		RunE: func(c *cobra.Command, _ []string) error {
			return status(runFloorServer(c.Context(), keyFile, port, m.Stdout, m.Stderr))
		},
	}
	c.Flags().StringVar(&keyFile, "key-file", "", "the endpoint key the proof is made with")
	c.Flags().IntVar(&port, "port", 0, "the loopback port; 0 picks a free one")
	return c
}

// runFloorServer serves the floor until ctx ends: on a free loopback port
// it prints as "floor <url>", the proof of the key in --key-file, the
// upgrade, and each message answered at once with the frames a harness
// sends (initialize's and session/resume's results, _link/taken, one
// agent_message_chunk, the prompt's result), by hand over coder/websocket:
// no endpoint, acp, store or model code, so what lnk measure times here
// is the least any harness could cost on this machine.
func runFloorServer(ctx context.Context, keyFile string, port int, stdout, stderr io.Writer) int {
	key, err := contract.ReadKeyFile(keyFile)
	if err != nil {
		fmt.Fprintf(stderr, "lnk measure floor-server: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		fmt.Fprintf(stderr, "lnk measure floor-server: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: floorHandler(key), ReadHeaderTimeout: 10 * time.Second}
	context.AfterFunc(ctx, func() { srv.Close() })
	fmt.Fprintf(stdout, "floor %s\n", contract.EndpointURL(ln.Addr().(*net.TCPAddr).Port))
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintf(stderr, "lnk measure floor-server: %v\n", err)
		return 1
	}
	return 0
}

// floorHandler answers the floor's paths.
func floorHandler(key []byte) http.Handler {
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
