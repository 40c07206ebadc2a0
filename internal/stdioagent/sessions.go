package stdioagent

// The agent's sessions: taken up (new, load, resume), listed, closed,
// their commands told and their MCP servers kept.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// CloseSession lets the session go: with close among its caps, a prompt
// of it is refused until it is taken up again.
func (a *agent) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	a.log("close " + string(p.SessionId))
	a.mu.Lock()
	delete(a.open, string(p.SessionId))
	a.mu.Unlock()
	return sdk.CloseSessionResponse{}, nil
}

// opened marks session made or taken up.
func (a *agent) opened(session string) {
	a.mu.Lock()
	a.open[session] = true
	a.mu.Unlock()
}

// ListSessions lists the sessions its folder holds, their cwd the
// folder, one a page (so a client follows the cursor).
func (a *agent) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	a.log("list")
	entries, _ := os.ReadDir(a.state)
	var ids []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "s-") && !strings.Contains(e.Name(), ".") {
			ids = append(ids, e.Name())
		}
	}
	res := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	i := 0
	if p.Cursor != nil {
		i, _ = strconv.Atoi(*p.Cursor)
	}
	if i < len(ids) {
		res.Sessions = append(res.Sessions, sdk.SessionInfo{SessionId: sdk.SessionId(ids[i]), Cwd: a.state})
		if i+1 < len(ids) {
			next := strconv.Itoa(i + 1)
			res.NextCursor = &next
		}
	}
	return res, nil
}

func (a *agent) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, nil
}

func (a *agent) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, nil
}

// commands sends the session's command list.
func (a *agent) commands(ctx context.Context, session string) {
	if os.Getenv(EnvNoLists) != "" {
		return
	}
	a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(session), Update: sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{
		AvailableCommands: []sdk.AvailableCommand{{Name: "clear", Description: "start anew"}, {Name: "compact", Description: "compact"}},
	}}})
}

func (a *agent) keepMCP(session string, servers []sdk.McpServer) {
	var list []string
	for _, s := range servers {
		if s.Http != nil {
			list = append(list, s.Http.Name+"="+s.Http.Url)
		}
	}
	a.mu.Lock()
	a.mcp[session] = list
	a.mu.Unlock()
}

func (a *agent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	id := "s-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	a.log("new " + id)
	os.WriteFile(filepath.Join(a.state, id), nil, 0o600)
	a.keepMCP(id, p.McpServers)
	a.opened(id)
	if os.Getenv(EnvLateList) != "" {
		go func() {
			time.Sleep(100 * time.Millisecond)
			a.commands(context.Background(), id)
		}()
	} else {
		a.commands(ctx, id) // before the answer, as Claude Code does
	}
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(id)}, nil
}

// history is what session was sent, or an error for a session it
// doesn't have.
func (a *agent) history(session string) (string, error) {
	if session == "" || strings.ContainsAny(session, "/\\.") {
		return "", fmt.Errorf("no session %q", session)
	}
	b, err := os.ReadFile(filepath.Join(a.state, session))
	if err != nil {
		return "", fmt.Errorf("no session %q", session)
	}
	return string(b), nil
}

// replay streams the session's history, as session/load does.
func (a *agent) replay(ctx context.Context, session, history string) {
	for _, line := range strings.Split(strings.TrimSpace(history), "\n") {
		if line == "" {
			continue
		}
		a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(session), Update: sdk.UpdateUserMessageText("REPLAYED " + line)})
		a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(session), Update: sdk.UpdateAgentMessageText("REPLAYED answer to " + line)})
	}
}

func (a *agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	a.log("load " + string(p.SessionId))
	a.slowTake()
	h, err := a.history(string(p.SessionId))
	if err != nil {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(err.Error())
	}
	a.keepMCP(string(p.SessionId), p.McpServers)
	a.opened(string(p.SessionId))
	if os.Getenv(EnvLateReplay) != "" {
		go func() {
			// After the answer is written: the SDK writes it once this
			// returns, and the pause lets it go first.
			time.Sleep(20 * time.Millisecond)
			a.replay(context.Background(), string(p.SessionId), h)
		}()
		a.commands(ctx, string(p.SessionId))
		return sdk.LoadSessionResponse{}, nil
	}
	a.replay(ctx, string(p.SessionId), h)
	a.commands(ctx, string(p.SessionId))
	return sdk.LoadSessionResponse{}, nil
}

func (a *agent) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	a.log("resume " + string(p.SessionId))
	a.slowTake()
	if os.Getenv(EnvQuoteMCP) != "" {
		var quoted []string
		for _, m := range p.McpServers {
			if m.Http != nil {
				quoted = append(quoted, m.Http.Name+" at "+m.Http.Url)
			}
		}
		msg := "resume refused: MCP server " + strings.Join(quoted, ", ") + " did not answer"
		fmt.Fprintln(os.Stderr, msg)
		return sdk.ResumeSessionResponse{}, &sdk.RequestError{Code: -32603, Message: msg}
	}
	if os.Getenv(EnvNoResume) != "" {
		return sdk.ResumeSessionResponse{}, sdk.NewInternalError(map[string]any{"error": "resume refused"})
	}
	h, err := a.history(string(p.SessionId))
	if err != nil {
		return sdk.ResumeSessionResponse{}, sdk.NewInvalidParams(err.Error())
	}
	a.keepMCP(string(p.SessionId), p.McpServers)
	a.opened(string(p.SessionId))
	a.replay(ctx, string(p.SessionId), h) // against the protocol, as some agents do
	a.commands(ctx, string(p.SessionId))
	return sdk.ResumeSessionResponse{}, nil
}
