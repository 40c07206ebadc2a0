package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"

	"github.com/coder/websocket"
)

// WebSocket frames messages as a WebSocket's text frames, one JSON-RPC
// message to a frame. Binary frames are read past.
type WebSocket struct {
	c *websocket.Conn

	// watched is the context whose end closes the connection, watched
	// once for every call made with it (a Conn's life): coder/websocket
	// otherwise arms and disarms a watch of it at each frame read or
	// written. A call with another context is watched for itself.
	mu      sync.Mutex
	watched context.Context
	unwatch func() bool
}

// NewWebSocket frames c, reading messages of up to limit bytes
// (MaxMessage when limit <= 0).
func NewWebSocket(c *websocket.Conn, limit int64) *WebSocket {
	if limit <= 0 {
		limit = MaxMessage
	}
	c.SetReadLimit(limit)
	return &WebSocket{c: c}
}

// Conn is the WebSocket framed.
func (w *WebSocket) Conn() *websocket.Conn { return w.c }

// ReadMessage returns the next text frame's bytes: io.EOF once the peer
// closed with a normal closure (or going away), ErrTooLong past the read
// limit. Cancelling ctx closes the connection (coder/websocket's rule).
func (w *WebSocket) ReadMessage(ctx context.Context) ([]byte, error) {
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
		b, err := readWhole(r)
		if err != nil {
			return nil, readError(err)
		}
		return b, nil
	}
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

// Reading a message whose length isn't known beforehand: into a first
// buffer, enough for most; past it into chunks of readChunk bytes, then
// into one slice of the message's length. A large message so costs twice
// its size while it is read, never the copies a slice grown by doubling
// leaves behind.
const (
	readFirst = 8 << 10
	readChunk = 1 << 20
	gcPast    = 4 << 20 // a message past which its chunks are collected at once
)

// firstBuffers holds the first buffers of reads, so a message that fits
// in one costs only a slice of its own length, not readFirst bytes.
var firstBuffers = sync.Pool{New: func() any { return new([readFirst]byte) }}

// readWhole reads r to its end into one slice of exactly its length.
func readWhole(r io.Reader) ([]byte, error) {
	buf := firstBuffers.Get().(*[readFirst]byte)
	defer firstBuffers.Put(buf)
	first := buf[:]
	n, err := io.ReadFull(r, first)
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return bytes.Clone(first[:n]), nil
	case err != nil:
		return nil, err
	}
	var chunks [][]byte
	total, last := n, 0
	for {
		c := make([]byte, readChunk)
		chunks = append(chunks, c)
		last, err = io.ReadFull(r, c)
		total += last
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
		// much again (BenchmarkPromptPeakRSS: 3.0 times a 31 MB
		// prompt's size without, 2.05 with).
		runtime.GC()
	}
	return b, nil
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
