package acp

import (
	"fmt"
	"sync"
)

// Budget bounds the bytes of prompts one agent has in flight at once,
// over all its connections: a message's bytes count as each part of it is
// read (over a WebSocket; a framer that can't says its length once read),
// a prompt's until its turn is answered, any other message's until it is
// handled. A message that goes past the bound is read past, none of it
// kept, and refused with an internal error saying so, before anything
// reaches the agent, so a flood of large prompts costs the memory of the
// bound, not of the flood. A nil Budget bounds nothing.
type Budget struct {
	max int64

	mu   sync.Mutex
	used int64
}

// NewBudget bounds prompts in flight to max bytes.
func NewBudget(max int64) *Budget { return &Budget{max: max} }

// Take counts n bytes of a prompt in flight, or says (as a JSON-RPC
// error for its sender) that the bound is reached and counts nothing.
// Each Take that succeeds is matched by a Give once the prompt's turn is
// answered.
func (b *Budget) Take(n int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return Errorf(CodeInternalError, "the agent has %s of prompts in flight and this one is %s, past its bound of %s: send it again once they are answered", mib(b.used), mib(n), mib(b.max))
	}
	b.used += n
	return nil
}

// tryTake counts n bytes in flight if that stays within the bound.
func (b *Budget) tryTake(n int64) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

// pastError is the error a message of size bytes gets when reading it
// went past the bound.
func (b *Budget) pastError(size int64) *Error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Errorf(CodeInternalError, "the agent has %s of prompts in flight and this message is %s, past its bound of %s: nothing of it was kept; send it again once they are answered", mib(b.used), mib(size), mib(b.max))
}

// Give lets n bytes taken go.
func (b *Budget) Give(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// InFlight is the bytes of prompts in flight now.
func (b *Budget) InFlight() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
