package fakeprovider

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// errGone: the client went, or the server closed, mid-answer.
var errGone = errors.New("client gone")

// stream writes one answer's chunks: SSE events, NDJSON lines or a JSON
// array's items, each flushed, with the turn's delay before each.
type stream struct {
	w       http.ResponseWriter
	ctx     context.Context
	closing <-chan struct{}
	delay   time.Duration
	crlf    bool // Gemini ends its events with \r\n\r\n
	started bool
}

// start sends the status and headers.
func (s *stream) start(contentType string) {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-cache")
	s.w.WriteHeader(http.StatusOK)
	s.flush()
}

func (s *stream) flush() {
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// pause waits the turn's delay; errGone if the client goes first.
func (s *stream) pause() error {
	if s.delay <= 0 {
		return s.alive()
	}
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-s.ctx.Done():
		return errGone
	case <-s.closing:
		return errGone
	}
}

func (s *stream) alive() error {
	select {
	case <-s.ctx.Done():
		return errGone
	case <-s.closing:
		return errGone
	default:
		return nil
	}
}

// write sends raw bytes after the pause and flushes them.
func (s *stream) write(b []byte) error {
	if err := s.pause(); err != nil {
		return err
	}
	if _, err := s.w.Write(b); err != nil {
		return errGone
	}
	s.flush()
	return nil
}

// event sends an SSE event; an empty name sends only its data line.
func (s *stream) event(name string, v any) error {
	end := "\n\n"
	if s.crlf {
		end = "\r\n\r\n"
	}
	var b []byte
	if name != "" {
		b = append(b, "event: "+name+"\n"...)
	}
	b = append(b, "data: "...)
	switch d := v.(type) {
	case string:
		b = append(b, d...)
	default:
		b = append(b, marshal(v)...)
	}
	b = append(b, end...)
	return s.write(b)
}

// line sends an NDJSON line.
func (s *stream) line(v any) error {
	return s.write(append(marshal(v), '\n'))
}

// hang holds until the client goes or the server closes.
func (s *stream) hang() {
	select {
	case <-s.ctx.Done():
	case <-s.closing:
	}
}
