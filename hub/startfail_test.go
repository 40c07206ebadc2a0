package hub

import (
	"strings"
	"testing"
	"time"
)

// TestStartFailureReason: a harness that runs but never agrees on ACP (it
// answers initialize with another protocol version, or not at all) is
// refused, at the message and at /health, with why it didn't agree, not
// only that its output ended.
func TestStartFailureReason(t *testing.T) {
	for _, c := range []struct {
		name   string
		script string // the harness: a shell script reading initialize
		want   string
	}{
		{"another version", `read -r line; id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/'); printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":2}}\n' "$id"; sleep 30`, "no ACP version 1"},
		{"no answer", `read -r line; sleep 30`, "initialize"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, nil, func(cfg *Config) {
				cfg.Command = []string{"sh", "-c", c.script}
				cfg.CallTimeout = 500 * time.Millisecond
			})
			ctx := testCtx(t, 20*time.Second)
			e := r.message(ctx, "telegram:1", "hi", nil)
			if e.err == nil || !strings.Contains(e.err.Error(), c.want) {
				t.Errorf("the message was refused with %v, want the reason (%q)", e.err, c.want)
			}
			if err := r.hub.Health(ctx); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("/health was refused with %v, want the reason (%q)", err, c.want)
			}
		})
	}
}
