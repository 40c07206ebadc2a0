package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
		typ, b, err := w.c.Read(w.watch(ctx))
		if err != nil {
			switch websocket.CloseStatus(err) {
			case websocket.StatusNormalClosure, websocket.StatusGoingAway:
				return nil, io.EOF
			}
			if errors.Is(err, websocket.ErrMessageTooBig) {
				return nil, fmt.Errorf("read websocket message: %w", ErrTooLong)
			}
			if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("read websocket message: %w", io.ErrUnexpectedEOF)
			}
			return nil, fmt.Errorf("read websocket message: %w", err)
		}
		if typ == websocket.MessageText {
			return b, nil
		}
	}
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
