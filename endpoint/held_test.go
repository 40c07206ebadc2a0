package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint/endpointtest"
)

// commander is the tests' agent with commands of its own.
type commander struct{ echo }

func (*commander) Commands(agent string) []acp.Command {
	return []acp.Command{{Name: "model:set", Description: "run on a model"}}
}

// TestResumeAndCommandsOneWrite: session/resume's answer and the
// available_commands_update that follows it at once go to the client in
// one write, not two.
func TestResumeAndCommandsOneWrite(t *testing.T) {
	s, err := New(Config{Agents: testAgents, Handler: AgentHandler{Agent: &commander{}}})
	if err != nil {
		t.Fatal(err)
	}
	ln, url := endpointtest.Listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	tctx := testCtx(t)
	conn, err := Dial(tctx, DialOptions{URL: url, Key: []byte("key-main")})
	if err != nil {
		t.Fatal(err)
	}
	listed := make(chan struct{}, 1)
	c := acp.NewClient(tctx, conn, func(method string, params json.RawMessage) {
		if bytes.Contains(params, []byte(acp.UpdateAvailableCommands)) {
			listed <- struct{}{}
		}
	})
	if _, err := c.Initialize(tctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(tctx, "link:one-write"); err != nil {
		t.Fatal(err)
	}
	<-listed
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	conns := ln.Conns()
	if len(conns) != 1 {
		t.Fatalf("%d connections accepted, want 1", len(conns))
	}
	var resumed, both int
	for _, w := range conns[0].Writes() {
		answer := bytes.Contains(w, []byte(`"id":2,"result":{}`))
		listing := bytes.Contains(w, []byte(acp.UpdateAvailableCommands))
		if answer {
			resumed++
		}
		if answer && listing {
			both++
		}
	}
	if resumed != 1 || both != 1 {
		t.Errorf("session/resume's answer went in %d writes, %d of them with the commands' list, want 1 with it", resumed, both)
	}
}

// answersAtOnce answers every prompt steered as soon as it has it,
// saying nothing first: Serve says _link/taken for it.
type answersAtOnce struct{ echo }

func (*answersAtOnce) Prompt(ctx context.Context, p acp.Prompt, s acp.Stream) (acp.Outcome, error) {
	return acp.Outcome{StopReason: acp.StopEndTurn, Steered: true}, nil
}

// TestTakenWithAnswerOneWrite: a prompt answered as soon as the agent
// has it (a steered message's) gets _link/taken and its answer in one
// write, taken first.
func TestTakenWithAnswerOneWrite(t *testing.T) {
	s, err := New(Config{Agents: testAgents, Handler: AgentHandler{Agent: &answersAtOnce{}}})
	if err != nil {
		t.Fatal(err)
	}
	ln, url := endpointtest.Listen(t)
	go s.Serve(context.Background(), ln)
	ctx := testCtx(t)
	conn, err := Dial(ctx, DialOptions{URL: url, Key: []byte("key-main")})
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := message(ctx, conn, "telegram:1", "hi")
	if err != nil || !res.Steered() {
		t.Fatalf("answered %+v, %v; want steered", res, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	frames, err := ln.Conns()[0].Frames()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(frames, " | "), "result | result | _link/taken+result | close"; got != want {
		t.Errorf("writes after the upgrade:\n%s\nwant\n%s", got, want)
	}
}
