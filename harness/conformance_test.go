package harness_test

import (
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/conformance"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
)

// The words the conformance model acts on.
const (
	kitToolPrompt    = "conformance: call memory__search"
	kitRecoverPrompt = "conformance: answer once the caller has gone"
)

// kitModel is the conformance kit's model: it calls memory__search when
// told to (and offered it), answers the recover message only a while
// after its caller has gone, and otherwise says what it heard.
type kitModel struct{}

func (kitModel) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	said := req.LastUserText()
	last := req.Messages[len(req.Messages)-1]
	answered := len(last.Parts) > 0 && last.Parts[0].Kind == model.KindToolResult
	offered := false
	for _, t := range req.Tools {
		offered = offered || t.Name == "memory__search"
	}
	switch {
	case strings.Contains(said, kitToolPrompt) && offered && !answered && req.ToolChoice != model.ToolNone:
		return scripted.New(model.Response{Text: "searching", Calls: []model.ToolCall{{Name: "memory__search", Input: `{"query":"x"}`}}}).Stream(ctx, req, onDelta)
	case strings.Contains(said, kitRecoverPrompt):
		// The kit goes once it is told _link/taken; the answer comes after.
		select {
		case <-time.After(700 * time.Millisecond):
		case <-ctx.Done():
			return model.Response{}, ctx.Err()
		}
	}
	return scripted.Offline{Why: "conformance"}.Stream(ctx, req, onDelta)
}

// kitRecorder is the kit's view of what the model was given.
type kitRecorder struct {
	mu   sync.Mutex
	seen map[string][]conformance.ModelCall
}

func (k *kitRecorder) record(agent, thread string, req model.Request) {
	names := []string{}
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.seen[thread] = append(k.seen[thread], conformance.ModelCall{Text: scripted.RequestText(req), Tools: names})
}

func (k *kitRecorder) Seen(ctx context.Context, thread string) ([]conformance.ModelCall, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]conformance.ModelCall(nil), k.seen[thread]...), nil
}

// The harness passes the whole conformance kit, served by the endpoint
// package on a real listener, its conversations in real files.
func TestConformance(t *testing.T) {
	rec := &kitRecorder{seen: map[string][]conformance.ModelCall{}}
	key := []byte("conformance-key-0123456789")
	cfg := harnesstest.Config(t.TempDir(), kitModel{}, harness.Settings{Model: "offline"})
	cfg.Route = func(name string) (model.Route, error) { return model.Route{Provider: "kit", APIModel: name}, nil }
	cfg.Tools, cfg.OnCall, cfg.LeaseTTL = newTestTools(), rec.record, harness.DefaultLeaseTTL
	h, err := harness.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := endpoint.New(endpoint.Config{
		// Two owners' agents named alike, for the routing-shared check:
		// refused 409 before any reaches the harness.
		Agents: []endpoint.Agent{
			{Name: testAgent, ID: "owner.main", Key: key},
			{Name: "shared", ID: "owner.shared", Key: []byte("shared-key-one-0123456789")},
			{Name: "shared", ID: "other.shared", Key: []byte("shared-key-two-0123456789")},
		},
		Own:     testAgent,
		Handler: endpoint.AgentHandler{Agent: h},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(context.Background(), ln)
	t.Cleanup(func() {
		srv.Close()
		h.Close()
	})
	conformance.Run(t, conformance.Target{
		URL:       "http://" + ln.Addr().String() + contract.ACPPath,
		Key:       key,
		Agent:     testAgent,
		AgentID:   "owner.main",
		Nameless:  true,
		Shared:    "shared",
		PID:       os.Getpid(),
		ToolCall:  &conformance.ToolCall{Prompt: kitToolPrompt, Tool: "memory__search"},
		Model:     rec,
		Tools:     []string{"memory__search", "memory__write"},
		ModelName: "anthropic/claude-test",
		Recover:   &conformance.Recover{Prompt: kitRecoverPrompt},
	})
}
