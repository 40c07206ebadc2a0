// Package mcptest is what the tool servers' tests share: a session of
// the MCP go-sdk's client with a server, and a call made on it whose
// text and failure are answered, as Link Harness reads them.
package mcptest

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect is a go-sdk client's session with the MCP server at url over
// Streamable HTTP, closed when tb ends.
func Connect(tb testing.TB, url string) *mcp.ClientSession {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Call makes the call name with args and meta (nil for none), answering
// its text and whether the tool said it failed; a call the protocol
// itself refuses fails tb.
func Call(tb testing.TB, s *mcp.ClientSession, name string, args any, meta mcp.Meta) (string, bool) {
	tb.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		tb.Fatalf("call %s %v: %v", name, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String(), res.IsError
}
