package mcptools

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxJSONAnswer bounds what is read of a tool's answer given as one JSON
// body, which the MCP SDK reads whole (an answer streamed as events the
// SDK bounds itself, at the same 16 MiB an event).
const maxJSONAnswer = mcp.DefaultMaxEventSize

// errAnswerTooLarge: a tool's JSON answer passed maxJSONAnswer; its
// connection is given up.
var errAnswerTooLarge = fmt.Errorf("a tool's answer is at most %d bytes", maxJSONAnswer)

// boundedBodies is the http.RoundTripper every session goes through: a
// response that isn't an event stream is read at most maxJSONAnswer
// bytes, so a tool can't fill the harness's memory with one answer.
type boundedBodies struct{ base http.RoundTripper }

func (b boundedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(req)
	if err != nil || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	resp.Body = &boundedBody{rc: resp.Body, left: maxJSONAnswer}
	return resp, nil
}

// boundedBody reads rc to its end if that comes within left bytes, else
// fails with errAnswerTooLarge.
type boundedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errAnswerTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one past the bound, to see that there is more
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.left {
		b.left = -1
		return 0, errAnswerTooLarge
	}
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// boundClient is c carrying its sessions through boundedBodies.
func boundClient(c *http.Client) *http.Client {
	if _, ok := c.Transport.(boundedBodies); ok {
		return c
	}
	bc := *c
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	bc.Transport = boundedBodies{base: base}
	return &bc
}
