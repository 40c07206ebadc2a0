package harness_test

import (
	"context"
	"testing"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
)

// BenchmarkCommand measures an owner's command's whole way, as
// BenchmarkTurn does a message's: a fresh connection, initialize, resume
// (its commands listed), /chat:verbose on, its chat_set appended (synced)
// under the conversation's lease, the confirmation streamed.
func BenchmarkCommand(b *testing.B) {
	r := newBenchRig(b)
	ctx := context.Background()
	block := []acp.Block{{Type: "text", Text: "/chat:verbose on"}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: r.URL, Key: r.Key, Agent: testAgent})
		if err != nil {
			b.Fatal(err)
		}
		c := acp.NewClient(ctx, conn, nil)
		if _, err := c.Initialize(ctx); err != nil {
			b.Fatal(err)
		}
		if err := c.Resume(ctx, "telegram:1"); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Prompt(ctx, "telegram:1", block, nil); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
