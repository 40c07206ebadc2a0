package mcptools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzAnswerText proves a tools/call answer, as an MCP server sends it
// and the SDK reads it, never panics answerText, and that the text the
// model is given is at most maxAnswerText bytes, its first text whole
// when that fits.
func FuzzAnswerText(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"resource_link","uri":"file:///a","name":"a"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"t"}},{"type":"resource","resource":{"uri":"file:///b","blob":"aGk="}}]}`,
		`{"content":[],"structuredContent":{"a":[1,2]}}`,
		`{"content":[{"type":"audio","data":"aGk=","mimeType":"audio/wav"}],"isError":true}`,
		`{"content":null}`,
	} {
		f.Add([]byte(s), uint16(0))
	}
	f.Add([]byte(`{"content":[{"type":"text","text":"X"},{"type":"text","text":"Y"}]}`), uint16(40000))
	f.Fuzz(func(t *testing.T, b []byte, long uint16) {
		var res mcp.CallToolResult
		if json.Unmarshal(b, &res) != nil {
			return // the SDK refuses it: the call fails
		}
		if long > 0 { // texts long enough to pass the bound
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					tc.Text = strings.Repeat(tc.Text+"é", int(long))
				}
			}
		}
		got := answerText(&res)
		if len(got) > maxAnswerText {
			t.Fatalf("gave the model %d bytes, over %d", len(got), maxAnswerText)
		}
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok && len(tc.Text) <= maxAnswerText && !strings.HasPrefix(got, tc.Text) {
				t.Fatalf("the first text %q is not given whole: %q", tc.Text, got)
			}
		}
	})
}
