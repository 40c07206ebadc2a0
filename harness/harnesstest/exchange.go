package harnesstest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
)

// Note is one notification a client got: its method, and its update when
// it is a session/update.
type Note struct {
	Method string
	Update acp.Update
}

// Exchange is one client's connection to a Rig, as a bridge opens it:
// initialized, its session resumed, each notification kept.
type Exchange struct {
	Client *acp.Client
	Conn   *endpoint.ClientConn
	// Taken is closed when the first _link/taken comes.
	Taken <-chan struct{}

	mu       sync.Mutex
	notes    []Note
	commands []json.RawMessage
}

// Dial connects to the rig's endpoint as a bridge of thread would:
// initialize, then session/resume of thread.
func (r *Rig) Dial(ctx context.Context, thread string) *Exchange {
	r.T.Helper()
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: r.URL, Key: r.Key, Agent: Agent})
	if err != nil {
		r.T.Fatal(err)
	}
	taken := make(chan struct{})
	var once sync.Once
	x := &Exchange{Conn: conn, Taken: taken}
	x.Client = acp.NewClient(context.Background(), conn, func(method string, params json.RawMessage) {
		n := Note{Method: method}
		if method == acp.MethodSessionUpdate {
			var p struct {
				Update acp.Update `json:"update"`
			}
			json.Unmarshal(params, &p)
			n.Update = p.Update
			if p.Update.SessionUpdate == acp.UpdateAvailableCommands {
				x.mu.Lock()
				x.commands = append(x.commands, params)
				x.mu.Unlock()
				return
			}
		}
		x.mu.Lock()
		x.notes = append(x.notes, n)
		x.mu.Unlock()
		if method == contract.MethodTaken {
			once.Do(func() { close(taken) })
		}
	})
	if _, err := x.Client.Initialize(ctx); err != nil {
		r.T.Fatal(err)
	}
	if err := x.Client.Resume(ctx, thread); err != nil {
		r.T.Fatal(err)
	}
	return x
}

// Notes are the notifications got so far, but the session's
// available_commands_update (Commands).
func (x *Exchange) Notes() []Note {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]Note(nil), x.notes...)
}

// Commands are the session's available_commands_updates, each as it
// came.
func (x *Exchange) Commands() []json.RawMessage {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]json.RawMessage(nil), x.commands...)
}

// Text is the answer's chunks' text joined.
func (x *Exchange) Text() string {
	var b strings.Builder
	for _, n := range x.Notes() {
		if n.Update.SessionUpdate == acp.UpdateMessageChunk && n.Update.Content != nil {
			b.WriteString(n.Update.Content.Text)
		}
	}
	return b.String()
}

// Say sends one message, text and then blocks, in thread on a connection
// of its own and waits (20 s at most) for its answer.
func (r *Rig) Say(thread, text string, meta json.RawMessage, blocks ...acp.Block) (acp.PromptResult, *Exchange, error) {
	r.T.Helper()
	ctx, cancel := context.WithTimeout(r.T.Context(), 20*time.Second)
	defer cancel()
	x := r.Dial(ctx, thread)
	defer x.Client.Close()
	blocks = append([]acp.Block{{Type: "text", Text: text}}, blocks...)
	res, err := x.Client.Prompt(ctx, thread, blocks, meta)
	return res, x, err
}

// Paths are the agent's paths at the rig's home.
func (r *Rig) Paths() store.Paths {
	p, err := store.For(r.Home, Agent)
	if err != nil {
		r.T.Fatal(err)
	}
	return p
}

// Events reads thread's events from the files, as another process would.
func (r *Rig) Events(thread string) []store.Event {
	r.T.Helper()
	p := r.Paths()
	drivers, _ := Drivers(p)
	rt, err := router.New(p, log.Name, drivers)
	if err != nil {
		r.T.Fatal(err)
	}
	all, err := rt.Read(r.T.Context(), thread, 1)
	if err != nil {
		r.T.Fatal(err)
	}
	return all
}

// FolderFiles are the files of the agent's conversations' folders that
// aren't events: their tools and a turn asked to end.
func (r *Rig) FolderFiles() *folder.Files { return &folder.Files{Paths: r.Paths()} }

// Answers are the agent's answers on their way, as another process sees
// them.
func (r *Rig) Answers() *delivery.Answers { return &delivery.Answers{Paths: r.Paths()} }
