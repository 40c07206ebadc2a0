package harness

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
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
		conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: r.url, Key: r.key, Agent: testAgent})
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

type benchRig struct {
	url string
	key []byte
}

// offlineNow answers at once, as the offline model does.
type offlineNow struct{}

func (offlineNow) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	return scripted.Offline{Why: "bench"}.Stream(ctx, req, onDelta)
}

func newBenchRig(b *testing.B) *benchRig {
	r := &benchRig{key: []byte("bench-key-0123456789")}
	h, err := New(Config{
		Home:     b.TempDir(),
		Drivers:  testDrivers,
		Settings: func(context.Context, store.Paths) (Settings, error) { return Settings{Model: "offline"}, nil },
		Route:    func(name string) (model.Route, error) { return model.Route{Provider: "offline", APIModel: name}, nil },
		Provider: func(model.Route) (model.Provider, error) { return offlineNow{}, nil },
		LeaseTTL: 30 * time.Second,
	})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := endpoint.New(endpoint.Config{Agents: []endpoint.Agent{{Name: testAgent, Key: r.key}}, Own: testAgent, Handler: endpoint.AgentHandler{Agent: h}})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := listen()
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(context.Background(), ln)
	b.Cleanup(func() {
		srv.Close()
		h.Close()
	})
	r.url = "http://" + ln.Addr().String() + "/acp"
	return r
}
