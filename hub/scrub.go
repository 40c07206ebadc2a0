package hub

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/lnk-dev/link/internal/redact"
)

// addresses are the URLs of tools, each a secret an agent's error, its
// standard error or a line it wrote may quote (the MCP URL it was given,
// whose path is the tool's secret).
func addresses(tools []Tool) []string {
	var addrs []string
	for _, t := range tools {
		if t.URL != "" {
			addrs = append(addrs, t.URL)
		}
	}
	return addrs
}

// scrub is text with the hub's tools' addresses taken out
// (redact.Address), as a bridge is told it.
func (hb *Hub) scrub(text string) string { return redact.Addresses(text, hb.addrs...) }

// scrubbed is logger with addrs taken out of every message and value it
// logs (redact.Address). An error is logged as its text so scrubbed, its
// code and the rest of it kept.
func scrubbed(logger *slog.Logger, addrs []string) *slog.Logger {
	if len(addrs) == 0 {
		return logger
	}
	return slog.New(scrubHandler{next: logger.Handler(), addrs: addrs})
}

// scrubHandler is a slog.Handler that scrubs addrs out of what it hands
// next.
type scrubHandler struct {
	next  slog.Handler
	addrs []string
}

func (h scrubHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, redact.Addresses(r.Message, h.addrs...), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return scrubHandler{next: h.next.WithAttrs(clean), addrs: h.addrs}
}

func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{next: h.next.WithGroup(name), addrs: h.addrs}
}

// attr is a scrubbed: a string, an error, a Stringer or a []byte as its
// text without addrs, a group's each attribute so, anything else (a
// number, a time, a duration) as it was.
func (h scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redact.Addresses(v.String(), h.addrs...))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, ga := range g {
			clean[i] = h.attr(ga)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, redact.Addresses(x.Error(), h.addrs...))
		case fmt.Stringer:
			return slog.String(a.Key, redact.Addresses(x.String(), h.addrs...))
		case []byte:
			return slog.String(a.Key, redact.Addresses(string(x), h.addrs...))
		default:
			return slog.String(a.Key, redact.Addresses(fmt.Sprint(x), h.addrs...))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
