package endpoint

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// BenchmarkMessage is the endpoint's per-message overhead with an agent
// that answers at once: a fresh connection, the proof, the upgrade,
// initialize, session/resume, session/prompt, _link/taken, one chunk, the
// answer and the close, over loopback, with the CPU a message costs
// (cpu-us/op, the client's and the endpoint's: steadier than the time on
// a shared machine). TCP_NODELAY on is the contract; off (both sides)
// shows what it saves.
func BenchmarkMessage(b *testing.B) {
	for _, c := range []struct {
		name string
		off  bool
	}{{"nodelay=on", false}, {"nodelay=off", true}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := New(Config{Agents: testAgents, Handler: AgentHandler{Agent: &instant{}}, NoDelayOff: c.off})
			if err != nil {
				b.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Serve(ctx, ln) }()
			defer func() { cancel(); <-done }()
			o := DialOptions{URL: "http://" + ln.Addr().String() + contract.ACPPath, Key: []byte("key-main"), Agent: "main", NoDelayOff: c.off}
			blocks := []acp.Block{{Type: "text", Text: "hi"}}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				conn, err := Dial(ctx, o)
				if err != nil {
					b.Fatal(err)
				}
				cl := acp.NewClient(ctx, conn, nil)
				if _, err := cl.Initialize(ctx); err != nil {
					b.Fatal(err)
				}
				if err := cl.Resume(ctx, "telegram:42"); err != nil {
					b.Fatal(err)
				}
				if _, err := cl.Prompt(ctx, "telegram:42", blocks, nil); err != nil {
					b.Fatal(err)
				}
				if err := cl.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
		})
	}
}

// instant answers every prompt at once with one chunk.
type instant struct{}

func (instant) Prompt(ctx context.Context, p acp.Prompt, s acp.Stream) (acp.Outcome, error) {
	s.Taken(ctx)
	s.Chunk(ctx, "ok")
	return acp.Outcome{StopReason: acp.StopEndTurn}, nil
}

func (instant) Recover(ctx context.Context, agent string, p contract.RecoverParams) (contract.RecoverResult, error) {
	return contract.RecoverResult{}, nil
}
