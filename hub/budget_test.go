package hub

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
)

// TestPromptBudget: the hub bounds the agent's prompts in flight as Link
// Harness does (the endpoint's acp.Budget, over all its connections): a
// prompt past the bound while another is in flight is refused with an
// error saying so, and the harness never sees it; once the first turn is
// answered its bytes go, and the same prompt passes.
func TestPromptBudget(t *testing.T) {
	r := newRig(t, nil, nil)
	r.maxPrompt = 64 << 10
	r.restart()
	ctx := testCtx(t, 20*time.Second)
	pad := strings.Repeat("p", 40<<10) + "\n"
	s, err := r.open(ctx, "telegram:1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	held := make(chan *exchange, 1)
	go func() { held <- s.prompt(ctx, pad+"wait", nil) }()
	if err := s.waitChunk(ctx, "waiting"); err != nil {
		t.Fatal(err)
	}
	e := r.message(ctx, "telegram:2", pad+"second", nil)
	var rpcErr *acp.Error
	if !errors.As(e.err, &rpcErr) || !strings.Contains(rpcErr.Message, "past its bound of 0.1 MiB") {
		t.Fatalf("a prompt past the bound was answered %v, want an error naming the bound", e.err)
	}
	if got := r.agentLog("prompt "); len(got) != 1 {
		t.Fatalf("the harness was sent %d prompts, want the held one alone", len(got))
	}
	s.c.Cancel(ctx, "telegram:1")
	<-held
	if got := r.message(ctx, "telegram:2", pad+"second", nil).must(t); got != "echo: "+pad+"second" {
		t.Errorf("after the held turn was answered, the prompt came back as %d bytes", len(got))
	}
}
