package acp

import (
	"context"
	"errors"
)

// Framer carries whole JSON-RPC messages over some connection, one at a
// time each way. ReadMessage returns io.EOF once the peer has closed the
// connection cleanly. WriteMessage may be called from one goroutine at a
// time (Conn serialises its writes); ReadMessage likewise.
type Framer interface {
	// ReadMessage returns the next message's bytes, the caller's from
	// then on: the framer neither keeps nor reuses them (a prompt's
	// decoded strings are read where they lie in them). Cancelling ctx
	// may end the connection, not only the read.
	ReadMessage(ctx context.Context) ([]byte, error)
	// WriteMessage sends one message.
	WriteMessage(ctx context.Context, msg []byte) error
	// Close ends the connection.
	Close() error
}

// Batcher is a Framer that can send several messages in one write to
// its connection: a response and the notifications that follow it at
// once cost one system call, and wake the peer once.
type Batcher interface {
	Framer
	// WriteMessages sends msgs in order, each a message of its own.
	WriteMessages(ctx context.Context, msgs [][]byte) error
}

// MaxMessage is the default bound of one message read: prompts carry
// images, voice notes and documents in base64.
const MaxMessage = 32 << 20

// ErrTooLong is returned by a framer that read past its bound.
var ErrTooLong = errors.New("message longer than the read limit")
