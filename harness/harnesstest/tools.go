package harnesstest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
)

// Tools are a harness's tools for tests: memory__search, memory__write
// and web__fetch, each call answered with its input (web__fetch with
// 40 KiB), counted by its id so a test sees no call made twice.
type Tools struct {
	mu    sync.Mutex
	made  map[string]int
	names []string
	gate  chan struct{}
	// onCall, when not nil, is told of each call and its meta before it
	// is answered.
	onCall func(model.ToolCall, contract.CallMeta)
}

var _ harness.Tools = (*Tools)(nil)

// NewTools makes the three tools.
func NewTools() *Tools {
	return &Tools{made: map[string]int{}, names: []string{"memory__search", "memory__write", "web__fetch"}}
}

// Add offers one more tool, answered as the others are.
func (tt *Tools) Add(name string) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.names = append(tt.names, name)
}

// Names are the tools offered.
func (tt *Tools) Names() []string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return append([]string(nil), tt.names...)
}

// Hold makes each call wait, until gate is closed or the turn is
// cancelled (then answered "cancelled", an error); nil holds none.
func (tt *Tools) Hold(gate chan struct{}) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.gate = gate
}

// OnCall has f told of each call, and what the harness told the tool
// with it, before it is answered.
func (tt *Tools) OnCall(f func(model.ToolCall, contract.CallMeta)) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.onCall = f
}

// Offer offers the tools narrowed allows.
func (tt *Tools) Offer(ctx context.Context, agent string, narrowed *[]string) ([]model.Tool, error) {
	var out []model.Tool
	for _, n := range tt.Names() {
		if contract.Allowed(narrowed, n) {
			out = append(out, model.Tool{Name: n, Description: "a test tool", Schema: `{"type":"object"}`})
		}
	}
	return out, nil
}

// Call answers call with its input, after Hold's gate.
func (tt *Tools) Call(ctx context.Context, agent string, call model.ToolCall, meta contract.CallMeta) (string, bool) {
	tt.mu.Lock()
	tt.made[call.ID]++
	gate, onCall := tt.gate, tt.onCall
	tt.mu.Unlock()
	if onCall != nil {
		onCall(call, meta)
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return "cancelled", true
		}
	}
	if call.Name == "web__fetch" {
		return strings.Repeat("x", 40<<10), false
	}
	return fmt.Sprintf("%s found %s in %s", call.Name, call.Input, meta.Thread), false
}

// EndTurn does nothing: the tools keep nothing of a turn.
func (tt *Tools) EndTurn(context.Context, string) {}

// Count is how many times the call of id was made.
func (tt *Tools) Count(id string) int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.made[id]
}

// Total is how many calls were made, of every id.
func (tt *Tools) Total() int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	n := 0
	for _, c := range tt.made {
		n += c
	}
	return n
}

// Timers are a test's clock for harness.Config.AfterFunc: each timer is
// kept, to be fired by the test (Fire), never by time passing.
type Timers struct {
	mu  sync.Mutex
	all []*timer
}

type timer struct {
	d     time.Duration
	f     func()
	ended bool // fired or stopped
}

// AfterFunc keeps f, to run at a Fire of d, unless the stop it returns
// is called first.
func (c *Timers) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &timer{d: d, f: f}
	c.all = append(c.all, tm)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !tm.ended
		tm.ended = true
		return was
	}
}

// Fire runs, each once and in turn, the timers of d armed and not
// stopped, and says how many ran. Those they arm wait for the next Fire.
func (c *Timers) Fire(d time.Duration) int {
	c.mu.Lock()
	var due []*timer
	for _, tm := range c.all {
		if !tm.ended && tm.d == d {
			tm.ended = true
			due = append(due, tm)
		}
	}
	c.mu.Unlock()
	for _, tm := range due {
		tm.f()
	}
	return len(due)
}
