package hub

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
