package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"runtime"
	"sync"

	"github.com/coder/websocket"
)

// WebSocket frames messages as a WebSocket's text frames, one JSON-RPC
// message to a frame. Binary frames are read past.
type WebSocket struct {
	c     *websocket.Conn
	limit int64 // the read limit

	// watched is the context whose end closes the connection, watched
	// once for every call made with it (a Conn's life): coder/websocket
	// otherwise arms and disarms a watch of it at each frame read or
	// written. A call with another context is watched for itself.
	mu      sync.Mutex
	watched context.Context
	unwatch func() bool

	holder Holder // nil: WriteMessages writes each message on its own
}

var _ Batcher = (*WebSocket)(nil)

// Holder holds a connection's writes until Send sends them, together, in
// one write: the connection under a WebSocket, so that several of its
// frames go in one system call.
type Holder interface {
	Hold()
	Send() error
}

// SetHolder has WriteMessages send its messages' frames in one write
// through h, the connection the WebSocket writes to. Call it before the
// WebSocket is used.
func (w *WebSocket) SetHolder(h Holder) { w.holder = h }

// NewWebSocket frames c, reading messages of up to limit bytes
// (MaxMessage when limit <= 0).
func NewWebSocket(c *websocket.Conn, limit int64) *WebSocket {
	if limit <= 0 {
		limit = MaxMessage
	}
	c.SetReadLimit(limit)
	return &WebSocket{c: c, limit: limit}
}

// Conn is the WebSocket framed.
func (w *WebSocket) Conn() *websocket.Conn { return w.c }

// ReadMessage returns the next text frame's bytes: io.EOF once the peer
// closed with a normal closure (or going away), ErrTooLong past the read
// limit. Cancelling ctx closes the connection (coder/websocket's rule).
func (w *WebSocket) ReadMessage(ctx context.Context) ([]byte, error) {
	return w.readCharged(ctx, nil)
}

// readCharged is ReadMessage with each part of the message charged as it
// is read (nil charges nothing): once charge refuses, the rest of the
// message is read past, held nowhere, and the error is a *pastBound
// holding the message's start and length.
func (w *WebSocket) readCharged(ctx context.Context, charge func(n int64) error) ([]byte, error) {
	for {
		typ, r, err := w.c.Reader(w.watch(ctx))
		if err != nil {
			return nil, readError(err)
		}
		if typ != websocket.MessageText {
			if _, err := io.Copy(io.Discard, r); err != nil {
				return nil, readError(err)
			}
			continue
		}
		b, err := readWhole(r, w.limit, charge)
		if asPastBound(err) != nil {
			return nil, err
		}
		if err != nil {
			return nil, readError(err)
		}
		return b, nil
	}
}

// pastBound is a message read past, not kept, because its bytes went
// past the bound of bytes in flight: its start (for its id) and length.
type pastBound struct {
	start []byte
	size  int64
	err   error // the charge's refusal
}

func (p *pastBound) Error() string { return p.err.Error() }

// asPastBound is err's *pastBound, nil when it has none: asked only of
// an error, so a message read costs no target for errors.As.
func asPastBound(err error) *pastBound {
	if err == nil {
		return nil
	}
	var past *pastBound
	if errors.As(err, &past) {
		return past
	}
	return nil
}

// readError says why a read ended as ReadMessage does.
func readError(err error) error {
	switch websocket.CloseStatus(err) {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway:
		return io.EOF
	}
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return fmt.Errorf("read websocket message: %w", ErrTooLong)
	}
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
		return fmt.Errorf("read websocket message: %w", io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("read websocket message: %w", err)
}

// Reading a message: into a first buffer, enough for most. Past it, when
// coder/websocket knows how much is left (frameLeft: the message's last
// frame, uncompressed, as every ACP client sends one), into one slice of
// exactly the message's length, charged whole first; else into chunks of
// readChunk bytes, each charged as it is read, then into one slice of
// the message's length.
// A large message so costs its size while it is read (twice its size
// when the length isn't known), never the copies a slice grown by
// doubling leaves behind.
const (
	readFirst = 8 << 10
	readChunk = 1 << 20
	gcPast    = 4 << 20 // a message past which its chunks are collected at once
)

// firstBuffers holds the first buffers of reads, so a message that fits
// in one costs only a slice of its own length, not readFirst bytes.
var firstBuffers = sync.Pool{New: func() any { return new([readFirst]byte) }}

// readWhole reads r to its end into one slice of exactly its length,
// charging each part read (charge may be nil); a message past limit is
// ErrTooLong.
func readWhole(r io.Reader, limit int64, charge func(n int64) error) ([]byte, error) {
	buf := firstBuffers.Get().(*[readFirst]byte)
	defer firstBuffers.Put(buf)
	first := buf[:]
	n, err := io.ReadFull(r, first)
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if err := chargeOf(charge, n); err != nil {
			return nil, &pastBound{start: bytes.Clone(first[:n]), size: int64(n), err: err}
		}
		return bytes.Clone(first[:n]), nil
	case err != nil:
		return nil, err
	}
	if err := chargeOf(charge, n); err != nil {
		return nil, readPast(r, first, 0, err)
	}
	// A frame longer than the limit is read in chunks, so coder/websocket
	// refuses it as it does any message too long.
	if left, ok := frameLeft(r); ok && int64(n)+left <= limit {
		return readKnown(r, first, left, charge)
	}
	var chunks [][]byte
	total, last := n, 0
	for {
		c := make([]byte, readChunk)
		chunks = append(chunks, c)
		last, err = io.ReadFull(r, c)
		total += last
		if err := chargeOf(charge, last); err != nil {
			return nil, readPast(r, first, int64(total-n), err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, total)
	b = append(b, first...)
	for i, c := range chunks {
		if i == len(chunks)-1 {
			c = c[:last]
		}
		b = append(b, c...)
		chunks[i] = nil
	}
	if total >= gcPast {
		// The chunks are garbage now, as large as the message, and the
		// next GC is far off: collected at once, their pages hold the
		// prompt's decoded blocks instead of the heap growing by as
		// much again.
		runtime.GC()
	}
	return b, nil
}

// readKnown reads the left bytes of a message after first into one slice
// of the message's length, charged whole before a byte of it is read: of
// several large messages read at once, those the bound holds are read
// and the others refused, not each read in part until all are refused.
func readKnown(r io.Reader, first []byte, left int64, charge func(n int64) error) ([]byte, error) {
	if charge != nil {
		if err := charge(left); err != nil {
			return nil, readPast(r, first, 0, err)
		}
	}
	b := make([]byte, len(first), int64(len(first))+left)
	copy(b, first)
	for int64(len(b)) < int64(cap(b)) {
		n, err := io.ReadFull(r, b[len(b):min(cap(b), len(b)+readChunk)])
		b = b[:len(b)+n]
		if err != nil {
			return nil, err
		}
	}
	// The frame said its length; a peer can't have sent more.
	var one [1]byte
	if n, _ := r.Read(one[:]); n > 0 {
		return nil, errors.New("websocket message longer than its frame said")
	}
	return b, nil
}

// readPast reads the rest of a message refused by its charge, keeping
// none of it, and says how long it was; read is how much of it was
// already read after first.
func readPast(r io.Reader, first []byte, read int64, refused error) error {
	rest, err := io.Copy(io.Discard, r)
	if err != nil {
		return err
	}
	return &pastBound{start: bytes.Clone(first), size: int64(len(first)) + read + rest, err: refused}
}

// frameLeft is how many bytes of its message coder/websocket's message
// reader r has left, when it knows: the frame being read is the
// message's last and isn't compressed. coder/websocket doesn't say it;
// its reader's fields do (fin, flate, payloadLength, read by reflection,
// never written), and TestReadKnowsFrameLength fails if a new version of
// it stops holding them, so a message would be read in chunks again.
func frameLeft(r io.Reader) (int64, bool) {
	v := reflect.ValueOf(r)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, false
	}
	v = v.Elem()
	fin, flate, left := v.FieldByName("fin"), v.FieldByName("flate"), v.FieldByName("payloadLength")
	if fin.Kind() != reflect.Bool || flate.Kind() != reflect.Bool || left.Kind() != reflect.Int64 {
		return 0, false
	}
	if !fin.Bool() || flate.Bool() || left.Int() < 0 {
		return 0, false
	}
	return left.Int(), true
}

func chargeOf(charge func(int64) error, n int) error {
	if charge == nil || n == 0 {
		return nil
	}
	return charge(int64(n))
}

// WriteMessage sends msg as one text frame. Cancelling ctx closes the
// connection (coder/websocket's rule): pass a context that lives as long
// as the connection.
func (w *WebSocket) WriteMessage(ctx context.Context, msg []byte) error {
	if err := w.c.Write(w.watch(ctx), websocket.MessageText, msg); err != nil {
		return fmt.Errorf("write websocket message: %w", err)
	}
	return nil
}

// WriteMessages sends msgs as text frames, one each, in order: in one
// write to the connection when it has a Holder. A write that fails
// closes the connection, as coder/websocket does.
func (w *WebSocket) WriteMessages(ctx context.Context, msgs [][]byte) error {
	if w.holder == nil {
		for _, m := range msgs {
			if err := w.WriteMessage(ctx, m); err != nil {
				return err
			}
		}
		return nil
	}
	wctx := w.watch(ctx)
	w.holder.Hold()
	for _, m := range msgs {
		if err := w.c.Write(wctx, websocket.MessageText, m); err != nil {
			w.holder.Send()
			return fmt.Errorf("write websocket message: %w", err)
		}
	}
	if err := w.holder.Send(); err != nil {
		w.c.CloseNow()
		return fmt.Errorf("write websocket message: %w", err)
	}
	return nil
}

// watch returns the context a call with ctx passes to coder/websocket:
// the first context that can end is watched once, its end closing the
// connection as coder/websocket would, and calls made with it pass one
// that never ends; any other is passed as it is.
func (w *WebSocket) watch(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch w.watched {
	case ctx:
		return context.Background()
	case nil:
		w.watched = ctx
		w.unwatch = context.AfterFunc(ctx, func() { w.c.CloseNow() })
		return context.Background()
	}
	return ctx
}

// Close ends the connection with a normal closure, waiting (a few seconds
// at most) for the peer's close frame.
func (w *WebSocket) Close() error {
	w.stopWatch()
	err := w.c.Close(websocket.StatusNormalClosure, "")
	if err != nil && !errors.Is(err, net.ErrClosed) && websocket.CloseStatus(err) == -1 {
		return fmt.Errorf("close websocket: %w", err)
	}
	return nil
}

// CloseNow ends the connection at once, without the close handshake: for
// error paths.
func (w *WebSocket) CloseNow() error {
	w.stopWatch()
	if err := w.c.CloseNow(); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("close websocket: %w", err)
	}
	return nil
}

// stopWatch lets the watched context go, the connection closing anyway.
func (w *WebSocket) stopWatch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.unwatch != nil {
		w.unwatch()
	}
}
