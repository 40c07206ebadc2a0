package acp

import "encoding/json"

// cancelRequestParams are $/cancel_request's params.
type cancelRequestParams struct {
	RequestID json.RawMessage `json:"requestId"`
}

// SendCancels has each call of c whose context ends before its answer
// (one given up on: timed out, or its turn failed) send the peer
// $/cancel_request naming it, so the peer may stop the work nobody waits
// for. A Client's calls don't: a bridge that stops waiting leaves the
// turn to end and its answer to be kept (_link/recover). Call it before
// Run.
func (c *Conn) SendCancels() { c.sendCancels = true }

// cancelCall sends $/cancel_request of the call id given up on, when c
// sends cancels, without waiting for the write: the caller has gone on.
func (c *Conn) cancelCall(id json.RawMessage) {
	if !c.sendCancels || c.life.Err() != nil {
		return
	}
	go c.Notify(c.life, MethodCancelRequest, cancelRequestParams{RequestID: id})
}

// Cancelled is closed when the peer cancels r with $/cancel_request while
// it is unanswered; it never is for a notification. The handler still
// answers r: with what it has, or CodeRequestCancelled.
func (r *Request) Cancelled() <-chan struct{} { return r.cancel }

// whenCancelled has f called once, on the read loop, when the peer
// cancels r ($/cancel_request) while it is unanswered; at once if it has
// already. Nothing waits for it meanwhile: a request costs no goroutine
// for a cancel that seldom comes.
func (r *Request) whenCancelled(f func()) {
	r.hookMu.Lock()
	if !r.wasCancelled {
		r.onCancel = f
		r.hookMu.Unlock()
		return
	}
	r.hookMu.Unlock()
	f()
}

// fireCancel closes Cancelled and calls what whenCancelled set.
func (r *Request) fireCancel() {
	close(r.cancel)
	r.hookMu.Lock()
	r.wasCancelled = true
	f := r.onCancel
	r.onCancel = nil
	r.hookMu.Unlock()
	if f != nil {
		f()
	}
}

// track keeps r, a request, as unanswered until it is answered.
func (c *Conn) track(r *Request) {
	if r.ID == nil {
		if r.Method == MethodCancelRequest {
			c.cancelled(r.Params)
		}
		return
	}
	r.cancel = make(chan struct{})
	c.mu.Lock()
	c.unanswered[string(r.ID)] = r
	c.mu.Unlock()
}

// answered lets r go as it is answered.
func (c *Conn) answered(r *Request) {
	c.mu.Lock()
	if c.unanswered[string(r.ID)] == r {
		delete(c.unanswered, string(r.ID))
	}
	c.mu.Unlock()
}

// cancelled closes Cancelled of the unanswered request a $/cancel_request
// names; one naming none (answered already, or never sent) changes
// nothing. The notification goes on to the handler as any other.
func (c *Conn) cancelled(params json.RawMessage) {
	var p cancelRequestParams
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	c.mu.Lock()
	r := c.unanswered[string(p.RequestID)]
	delete(c.unanswered, string(p.RequestID))
	c.mu.Unlock()
	if r != nil {
		r.fireCancel()
	}
}
