package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/coder/websocket"
)

// WebSocket frames messages as a WebSocket's text frames, one JSON-RPC
// message to a frame. Binary frames are read past.
type WebSocket struct {
	c *websocket.Conn
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
		typ, b, err := w.c.Read(ctx)
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
	if err := w.c.Write(ctx, websocket.MessageText, msg); err != nil {
		return fmt.Errorf("write websocket message: %w", err)
	}
	return nil
}

// Close ends the connection with a normal closure, waiting (a few seconds
// at most) for the peer's close frame.
func (w *WebSocket) Close() error {
	err := w.c.Close(websocket.StatusNormalClosure, "")
	if err != nil && !errors.Is(err, net.ErrClosed) && websocket.CloseStatus(err) == -1 {
		return fmt.Errorf("close websocket: %w", err)
	}
	return nil
}

// CloseNow ends the connection at once, without the close handshake: for
// error paths.
func (w *WebSocket) CloseNow() error {
	if err := w.c.CloseNow(); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("close websocket: %w", err)
	}
	return nil
}
