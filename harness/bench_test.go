package harness_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
)

func listen() (net.Listener, error) { return endpoint.Listen(context.Background(), "127.0.0.1:0") }

// BenchmarkTurn measures a message's whole way through the harness with
// a model that answers at once: a fresh connection proved and upgraded,
// initialize, resume, the prompt, its message and answer appended to a
// log conversation (each synced), the answer streamed, the prompt
// answered. That is the harness's own per-message overhead.
func BenchmarkTurn(b *testing.B) {
	r := newBenchRig(b)
	ctx := context.Background()
	block := []acp.Block{{Type: "text", Text: "hello"}}
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

// offlineNow answers at once, as the offline model does.
type offlineNow struct{}

func (offlineNow) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	return scripted.Offline{Why: "bench"}.Stream(ctx, req, onDelta)
}

// newBenchRig is the rig with the offline model, no tools and no
// requests recorded: what a message costs the harness alone.
func newBenchRig(b *testing.B) *harnesstest.Rig {
	return harnesstest.New(b, func(c *harness.Config) {
		c.Provider = func(model.Route) (model.Provider, error) { return offlineNow{}, nil }
		c.Tools, c.OnCall, c.LeaseTTL = nil, nil, 30*time.Second
	})
}
