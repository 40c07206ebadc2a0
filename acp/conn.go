package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by calls on a Conn whose connection has ended.
var ErrClosed = errors.New("acp connection closed")

// Handler handles a peer's request or notification. It runs on the
// connection's read loop, so messages are handled in the order they came
// and a notification's handling ends before the next message is read. A
// request is answered with r.Reply or r.Fail, then or later: a handler
// with long work (a prompt's turn) starts a goroutine and answers from it.
type Handler func(ctx context.Context, r *Request)

// Request is one incoming request or notification.
type Request struct {
	ID     json.RawMessage // nil for a notification
	Method string
	Params json.RawMessage // raw, as it came

	conn    *Conn
	replied atomic.Bool
	charged int64        // bytes of the connection's budget charged while it was read
	held    atomic.Int64 // bytes Charge kept, given back as it is answered
	// cancel is closed when the peer sends $/cancel_request naming the
	// request while it is unanswered; nil for a notification.
	cancel chan struct{}
	// onCancel is called as cancel closes (whenCancelled).
	hookMu       sync.Mutex
	onCancel     func()
	wasCancelled bool
}

// takeCharge is what reading r charged to the connection's budget, now
// the caller's to give back; the read loop gives back what no one took
// once r's handler returns.
func (r *Request) takeCharge() int64 {
	n := r.charged
	r.charged = 0
	return n
}

// Charge keeps r's bytes charged to its connection's budget (SetBudget)
// while its work runs, as a prompt's until its turn is answered: what
// reading it charged, or, from a framer that couldn't charge as it read,
// its params' length taken now, refused with an error for its sender
// past the bound. They are given back as r is answered (by Reply or
// Fail, just before the answer goes, so a caller that has it can send
// again at once), or by Release for a request that goes unanswered.
func (r *Request) Charge() error {
	n := r.takeCharge()
	if n == 0 && r.conn.budget != nil {
		n = int64(len(r.Params))
		if err := r.conn.budget.Take(n); err != nil {
			return err
		}
	}
	r.held.Store(n)
	return nil
}

// Release gives back what Charge kept, once.
func (r *Request) Release() {
	if n := r.held.Swap(0); n > 0 {
		r.conn.budget.Give(n)
	}
}

// IsNotification says whether r expects no answer.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Reply answers r with result: a json.RawMessage goes out as it is,
// anything else marshalled. Replying to a notification, or twice, does
// nothing.
func (r *Request) Reply(ctx context.Context, result any) error {
	m := r.answer(result)
	if m == nil {
		return nil
	}
	return r.conn.send(ctx, m)
}

// replyThen answers r with result as Reply does, then sends then, all
// in one write when the framer can (a Batcher's): a response and the
// notifications that follow it at once.
func (r *Request) replyThen(ctx context.Context, result any, then ...*Message) error {
	m := r.answer(result)
	if m == nil {
		return nil
	}
	return r.conn.send(ctx, append([]*Message{m}, then...)...)
}

// replyAfter answers r with result as Reply does, after before, in one
// write when the framer can (a Batcher's): a notification that must come
// first and the answer ready with it.
func (r *Request) replyAfter(ctx context.Context, result any, before *Message) error {
	m := r.answer(result)
	if m == nil {
		return r.conn.send(ctx, before)
	}
	return r.conn.send(ctx, before, m)
}

// answer is r's response with result, nil when r takes none (a
// notification, or one answered already); what Charge kept is given
// back.
func (r *Request) answer(result any) *Message {
	r.Release()
	if r.ID == nil || r.replied.Swap(true) {
		return nil
	}
	r.conn.answered(r)
	raw, err := rawOf(result)
	if err != nil {
		return &Message{ID: r.ID, Error: r.conn.told(ErrorOf(fmt.Errorf("encode result of %s: %w", r.Method, err)))}
	}
	if raw == nil {
		raw = json.RawMessage("null")
	}
	return &Message{ID: r.ID, Result: raw}
}

// Fail answers r with err, as ErrorOf maps it.
func (r *Request) Fail(ctx context.Context, err error) error {
	r.Release()
	if r.ID == nil || r.replied.Swap(true) {
		return nil
	}
	r.conn.answered(r)
	return r.conn.send(ctx, &Message{ID: r.ID, Error: r.conn.told(ErrorOf(err))})
}

// Conn is a JSON-RPC 2.0 peer over a Framer: it sends requests and awaits
// their responses, sends notifications, and hands what the other side
// sends to a Handler. Writes are safe from any goroutine.
type Conn struct {
	f       Framer
	handler Handler

	wsem chan struct{} // one write at a time

	log    *slog.Logger        // nil logs nothing
	scrub  func(string) string // an error's text as the peer is told it (nil: as it is)
	ids    *atomic.Int64       // the ids of its requests, maybe shared
	budget *Budget             // charged as each message is read (nil: none)

	mu       sync.Mutex
	awaiting map[string]chan *Message
	// unanswered are the peer's requests not answered yet, by id, for
	// its $/cancel_request.
	unanswered map[string]*Request
	// sendCancels: a call given up on is cancelled ($/cancel_request).
	sendCancels bool
	done        chan struct{} // closed when Run ends
	runErr      error
	life        context.Context // lives while Run reads; writes use it
	stop        context.CancelFunc
	started     atomic.Bool
	closing     atomic.Bool // Close was called: the read's end is ours
}

// NewConn makes a peer over f; h handles incoming requests and
// notifications (nil answers every request method-not-found). Run starts
// it.
func NewConn(f Framer, h Handler) *Conn {
	if h == nil {
		h = func(ctx context.Context, r *Request) {
			r.Fail(ctx, Errorf(CodeMethodNotFound, "method %q not found", r.Method))
		}
	}
	life, stop := context.WithCancel(context.Background())
	return &Conn{f: f, handler: h, ids: new(atomic.Int64), wsem: make(chan struct{}, 1), awaiting: map[string]chan *Message{}, unanswered: map[string]*Request{}, done: make(chan struct{}), life: life, stop: stop}
}

// SetLogger has what the peer sends wrong (a message that isn't one, a
// response to no request of ours) logged to l, each with its first
// bytes. Call it before Run.
func (c *Conn) SetLogger(l *slog.Logger) { c.log = l }

// SetScrub has the text of each error c answers a request with, its
// message and its data, passed through scrub before the peer is told it:
// a hub takes its tools' secret addresses out of what a harness's error
// quoted. Call it before Run.
func (c *Conn) SetScrub(scrub func(string) string) { c.scrub = scrub }

// told is e as the peer is told it: scrubbed, a copy, when c scrubs (its
// data still JSON, else the scrubbed text as a JSON string).
func (c *Conn) told(e *Error) *Error {
	if c.scrub == nil {
		return e
	}
	out := &Error{Code: e.Code, Message: c.scrub(e.Message)}
	if len(e.Data) > 0 {
		out.Data = json.RawMessage(c.scrub(string(e.Data)))
		if !json.Valid(out.Data) {
			out.Data, _ = json.Marshal(string(out.Data))
		}
	}
	return out
}

// SetBudget has each message c reads charged to budget as its parts are
// read (a WebSocket's; from another framer Request.Charge takes it once
// read), a message past the bound read past and refused: a request's
// bytes go back once its handler returns, unless it kept them
// (Request.Charge). Call it before Run.
func (c *Conn) SetBudget(budget *Budget) { c.budget = budget }

// SetIDs has c number its requests from ids, which other Conns may share:
// a hub that restarts its peer shares one, so a late response to a request
// the last peer was sent is never taken for the answer of a new one.
// Call it before Run.
func (c *Conn) SetIDs(ids *atomic.Int64) { c.ids = ids }

// logBad logs a message the peer sent wrong, with its first bytes.
func (c *Conn) logBad(ctx context.Context, what string, b []byte) {
	if c.log == nil {
		return
	}
	if len(b) > 200 {
		b = b[:200]
	}
	c.log.LogAttrs(ctx, slog.LevelWarn, what, slog.String("start", string(b)))
}

// Run reads messages until the connection ends or ctx is done, and
// returns nil when the peer closed it cleanly. Calls still waiting then
// fail with ErrClosed. Run is called once.
func (c *Conn) Run(ctx context.Context) error {
	if c.started.Swap(true) {
		return errors.New("acp connection: run twice")
	}
	stopLife := context.AfterFunc(ctx, c.stop)
	defer stopLife()
	err := c.read(ctx)
	if w, ok := c.f.(*WebSocket); ok && err == nil {
		// Closed cleanly (the peer's close, echoed, ends coder/websocket's
		// connection; or Close): the end of c's life below needn't close it
		// again, in a goroutine of its own.
		w.stopWatch()
	}
	c.mu.Lock()
	c.runErr = err
	for id, ch := range c.awaiting {
		close(ch)
		delete(c.awaiting, id)
	}
	c.mu.Unlock()
	c.stop()
	close(c.done)
	return err
}

func (c *Conn) read(ctx context.Context) error {
	for {
		var charged int64
		b, err := c.readMessage(&charged)
		if past := asPastBound(err); past != nil {
			c.budget.Give(charged)
			if err := c.refusePast(ctx, past); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			c.budget.Give(charged)
			if errors.Is(err, io.EOF) || c.closing.Load() {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		m, err := DecodeMessage(b)
		if err != nil {
			c.budget.Give(charged)
			c.logBad(ctx, "peer sent a bad message: "+err.Error(), b)
			// Nothing to answer but the error itself, under the message's
			// id when it has a readable one, else null.
			if err := c.send(ctx, &Message{ID: probeID(b), Error: c.told(ErrorOf(err))}); err != nil {
				return err
			}
			continue
		}
		if m.IsResponse() {
			c.budget.Give(charged)
			if !c.deliver(m) {
				c.logBad(ctx, "peer answered no request of ours", b)
			}
			continue
		}
		r := &Request{ID: m.ID, Method: m.Method, Params: m.Params, conn: c, charged: charged}
		c.track(r)
		c.handler(ctx, r)
		c.budget.Give(r.takeCharge())
	}
}

// readMessage reads the next message, charging its bytes to c's budget
// as they are read when the framer can (a WebSocket's), adding them to
// *charged.
func (c *Conn) readMessage(charged *int64) ([]byte, error) {
	ws, ok := c.f.(*WebSocket)
	if c.budget == nil || !ok {
		return c.f.ReadMessage(c.life)
	}
	return ws.readCharged(c.life, func(n int64) error {
		if !c.budget.tryTake(n) {
			return errPastBound
		}
		*charged += n
		return nil
	})
}

// errPastBound is a charge the budget refused.
var errPastBound = errors.New("past the bound of bytes in flight")

// refusePast answers a message read past because it went past the
// budget: an error under its id, read from its start; with no id found
// there, under null, and the connection ends, since no call of the
// peer's can be answered.
func (c *Conn) refusePast(ctx context.Context, past *pastBound) error {
	id := prefixID(past.start)
	err := c.send(ctx, &Message{ID: id, Error: c.budget.pastError(past.size)})
	if err != nil {
		return err
	}
	if id == nil {
		return fmt.Errorf("a message of %d bytes went past the bound of bytes in flight and its id wasn't in its first %d", past.size, len(past.start))
	}
	return nil
}

// deliver hands a response to the call awaiting it, and says whether one
// was.
func (c *Conn) deliver(m *Message) bool {
	c.mu.Lock()
	ch, ok := c.awaiting[string(m.ID)]
	delete(c.awaiting, string(m.ID))
	c.mu.Unlock()
	if ok {
		ch <- m
	}
	return ok
}

// Done is closed once Run has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why Run ended: nil for a clean close, or while it runs.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runErr
}

// Call sends a request and waits for its response: the raw result, or an
// *Error the peer answered. params may be a json.RawMessage, sent as it
// is, or Joined, sent as its parts joined.
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	parts, _ := params.(Joined)
	raw, err := rawOf(params)
	if err != nil {
		return nil, fmt.Errorf("call %s: encode params: %w", method, err)
	}
	ch := make(chan *Message, 1)
	c.mu.Lock()
	if c.isDone() {
		c.mu.Unlock()
		return nil, fmt.Errorf("call %s: %w", method, ErrClosed)
	}
	id := json.RawMessage(strconv.FormatInt(c.ids.Add(1), 10))
	c.awaiting[string(id)] = ch
	c.mu.Unlock()
	if err := c.send(ctx, &Message{ID: id, Method: method, Params: raw, parts: parts}); err != nil {
		c.forget(id)
		return nil, fmt.Errorf("call %s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("call %s: %w", method, ErrClosed)
		}
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-ctx.Done():
		c.forget(id)
		c.cancelCall(id)
		return nil, fmt.Errorf("call %s: %w", method, ctx.Err())
	}
}

func (c *Conn) forget(id json.RawMessage) {
	c.mu.Lock()
	delete(c.awaiting, string(id))
	c.mu.Unlock()
}

func (c *Conn) isDone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Notify sends a notification. params may be a json.RawMessage, sent as
// it is, or Joined, sent as its parts joined.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	m, err := notification(method, params)
	if err != nil {
		return err
	}
	if err := c.send(ctx, m); err != nil {
		return fmt.Errorf("notify %s: %w", method, err)
	}
	return nil
}

// notification is the notification of method with params, as Notify
// sends it.
func notification(method string, params any) (*Message, error) {
	parts, _ := params.(Joined)
	raw, err := rawOf(params)
	if err != nil {
		return nil, fmt.Errorf("notify %s: encode params: %w", method, err)
	}
	return &Message{Method: method, Params: raw, parts: parts}, nil
}

// send writes ms, in order, in one write when the framer is a Batcher;
// a message of Joined params alone, to a framer that writes parts
// (Stdio), as its parts, never joined.
// ctx bounds only the wait for the write's turn: the write itself runs
// under the connection's own life, since a cancelled write context would
// end the whole WebSocket.
func (c *Conn) send(ctx context.Context, ms ...*Message) error {
	var one [1][]byte // a message alone: no slice of its own
	bs := one[:0]
	if len(ms) > 1 {
		bs = make([][]byte, 0, len(ms))
	}
	if pw, ok := c.f.(partsWriter); ok && len(ms) == 1 {
		if parts := ms[0].encodeParts(); parts != nil { // written as they are
			return c.sendWith(ctx, func() error { return pw.writeParts(parts) })
		}
	}
	for _, m := range ms {
		b, err := m.Encode()
		if err != nil {
			return err
		}
		bs = append(bs, b)
	}
	return c.sendWith(ctx, func() error { return c.write(bs) })
}

// partsWriter is a framer that writes a message given as parts without
// joining them first (Stdio's).
type partsWriter interface {
	writeParts(parts [][]byte) error
}

// sendWith runs write, the connection's one write at a time, within its
// life; ctx bounds only the wait for the write's turn.
func (c *Conn) sendWith(ctx context.Context, write func() error) error {
	if c.life.Err() != nil {
		return ErrClosed
	}
	select {
	case c.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.life.Done():
		return ErrClosed
	}
	defer func() { <-c.wsem }()
	if c.life.Err() != nil {
		return ErrClosed
	}
	if err := write(); err != nil {
		if c.life.Err() != nil {
			return ErrClosed
		}
		return err
	}
	return nil
}

// write writes bs, each a message, in one write when the framer is a
// Batcher.
func (c *Conn) write(bs [][]byte) error {
	if len(bs) == 1 {
		return c.f.WriteMessage(c.life, bs[0])
	}
	if b, ok := c.f.(Batcher); ok {
		return b.WriteMessages(c.life, append([][]byte(nil), bs...))
	}
	for _, b := range bs {
		if err := c.f.WriteMessage(c.life, b); err != nil {
			return err
		}
	}
	return nil
}

// Close ends the connection through the framer (a WebSocket's close
// handshake): Run returns once the framer's read ends.
func (c *Conn) Close() error {
	c.closing.Store(true)
	err := c.f.Close()
	c.stop()
	return err
}

// prefixID is the id of a message of which b is the start, when b holds
// the whole of its "id" member, a string or integer; else nil.
func prefixID(b []byte) json.RawMessage {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	for i = skipSpace(b, i+1); i < len(b) && b[i] == '"'; {
		kend := stringEnd(b, i)
		if kend >= len(b) {
			return nil
		}
		key, err := unquote(b[i:kend])
		if i = skipSpace(b, kend); err != nil || i >= len(b) || b[i] != ':' {
			return nil
		}
		i = skipSpace(b, i+1)
		vend := valueEnd(b, i)
		if vend >= len(b) {
			return nil // the value may go on past b
		}
		if key == "id" {
			if v := b[i:vend]; len(v) > 0 && string(v) != "null" && validID(v) {
				return bytes.Clone(v)
			}
			return nil
		}
		if i = skipSpace(b, vend); i >= len(b) || b[i] != ',' {
			return nil
		}
		i = skipSpace(b, i+1)
	}
	return nil
}

// probeID is the id of a message that isn't a valid one, when it is an
// object with a string or integer id; else nil.
func probeID(b []byte) json.RawMessage {
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if json.Unmarshal(b, &probe) != nil || probe.Method == nil || len(probe.ID) == 0 || string(probe.ID) == "null" || !validID(probe.ID) {
		return nil
	}
	return probe.ID
}
