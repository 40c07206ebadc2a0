package hub

import (
	"context"
	"errors"
)

// Tool is one of Link's tools given to each session: an MCP server over
// Streamable HTTP at its address on Link's proxy.
type Tool struct {
	Name string // memory, scheduler, acme_memory
	URL  string
}

// mcpServer is ACP's McpServer of the http kind.
type mcpServer struct {
	Type    string   `json:"type"` // http
	Name    string   `json:"name"`
	URL     string   `json:"url"`
	Headers []header `json:"headers"`
}

type header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// mcpServers are the mcpServers of a session the hub makes, resumes or
// loads: Link's tools, or none for a harness that takes no MCP server over
// HTTP (its adapter writes them into the harness's own settings instead).
func (hb *Hub) mcpServers(caps capabilities) []mcpServer {
	out := []mcpServer{}
	if !caps.mcpHTTP {
		return out
	}
	for _, t := range hb.cfg.Tools {
		out = append(out, mcpServer{Type: "http", Name: t.Name, URL: t.URL, Headers: []header{}})
	}
	return out
}

// ToolSettings writes Link's tools into a harness's own settings, for a
// harness that says it takes no MCP server over HTTP
// (mcpCapabilities.http false): an adapter's, for the harness it knows.
type ToolSettings interface {
	// WriteTools writes tools where the harness reads its settings;
	// changed says whether what it reads there changed, so that the
	// harness, which may read them only as it starts, is started again
	// to read them. An error says why they can't be written: the
	// harness then runs without them.
	WriteTools(ctx context.Context, tools []Tool) (changed bool, err error)
}

// needsToolSettings says whether Link's tools reach a harness of caps
// only through its settings: it takes no MCP server over HTTP, and it is
// no Link Harness (whose sessions are threads: it has Link's tools
// itself).
func (hb *Hub) needsToolSettings(caps capabilities) bool {
	return !caps.mcpHTTP && !caps.threads && len(hb.cfg.Tools) > 0
}

// writeToolSettings has Config.ToolSettings write Link's tools into the
// harness's settings, bounded by the call timeout, once the harness said
// it takes no MCP server over HTTP; restart says the harness is started
// again to read them, which is done once in the hub's life. When they
// can't be written, the reason is kept for /health and said in the log
// once.
func (hb *Hub) writeToolSettings() (restart bool) {
	err := errors.New("its adapter writes no settings of it")
	changed := false
	if s := hb.cfg.ToolSettings; s != nil {
		ctx, cancel := context.WithTimeout(hb.life, hb.cfg.CallTimeout)
		changed, err = s.WriteTools(ctx, hb.cfg.Tools)
		cancel()
	}
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if err != nil {
		reason := "the harness takes no MCP server over HTTP, and Link's tools could not be written into its settings: " + err.Error() + "; it runs without them"
		if reason != hb.noTools {
			hb.cfg.Logger.Warn(reason)
		}
		hb.noTools = reason
		return false
	}
	hb.noTools = ""
	if changed && !hb.toolsRestarted {
		hb.toolsRestarted = true
		hb.cfg.Logger.Info("Link's tools written into the harness's settings, since it takes no MCP server over HTTP; it starts again to read them")
		return true
	}
	return false
}

// toolsReach says Link's tools reach the harness (in its sessions, or it
// has its own): /health no longer says they don't.
func (hb *Hub) toolsReach() {
	hb.mu.Lock()
	hb.noTools = ""
	hb.mu.Unlock()
}

// toolsMissing is why Link's tools don't reach the harness, "" when they
// do (or none are given).
func (hb *Hub) toolsMissing() string {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	return hb.noTools
}
