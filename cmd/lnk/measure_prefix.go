package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
)

// The cached prefix measure: a conversation over a small window, against
// the fake provider in Anthropic's format.
const (
	prefixWindow = 24000
	targetPrefix = 0.97
	figPrefixOn  = "cached prefix share, compaction on"
	figPrefixOff = "cached prefix share, compaction off"
)

// prefixShare is what the cached prefix measure found: the share of the
// requests' bytes a provider's cache could have kept, over how many
// requests, of which how many asked for a summary.
type prefixShare struct {
	share     float64
	requests  int
	summaries int
}

// measurePrefix runs the harness at bin against a fake provider (in this
// process) with [window] max at prefixWindow and compact_at compactAt
// (JSON: 0.75 or "never"), says turns messages of about 50 tokens in one
// conversation, stops it (it waits for a summary under way), and measures
// the share of each request's prompt that is a byte-identical prefix of
// the one before (fakeprovider.CachedPrefix).
func measurePrefix(ctx context.Context, bin string, turns int, compactAt string) (prefixShare, error) {
	fake := fakeprovider.New()
	defer fake.Close()
	home, err := os.MkdirTemp("", "lnk-measure-prefix-")
	if err != nil {
		return prefixShare{}, err
	}
	defer os.RemoveAll(home)
	p, err := store.For(home, "main")
	if err != nil {
		return prefixShare{}, err
	}
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		return prefixShare{}, err
	}
	cfg := fmt.Sprintf(`{"model":{"name":"anthropic/claude-measure"},"window":{"max":%d,"compact_at":%s}}`, prefixWindow, compactAt)
	if err := os.WriteFile(p.Config(), []byte(cfg), 0o600); err != nil {
		return prefixShare{}, err
	}
	key, err := ensureKey(filepath.Join(home, "measure.key"))
	if err != nil {
		return prefixShare{}, err
	}
	env := append(measureEnv(), "ANTHROPIC_API_KEY=measure", "ANTHROPIC_BASE_URL="+fake.URL())
	proc, err := startProc(ctx, bin, []string{"serve", "--home", home, "--port", "0", "--key-file", filepath.Join(home, "measure.key")}, env)
	if err != nil {
		return prefixShare{}, err
	}
	stop := proc.stop
	lines, err := proc.waitLines(ctx, 1, "endpoint ")
	if err != nil {
		stop()
		return prefixShare{}, err
	}
	url := strings.TrimPrefix(lines[0], "endpoint ")
	a := &agentConn{url: url, key: key, agent: "main"}
	for i := range turns {
		text := fmt.Sprintf("Message %d: %s", i, strings.Repeat("tell me more about the garden ", 5))
		if err := sayText(ctx, a, "telegram:1", text); err != nil {
			stop()
			return prefixShare{}, err
		}
	}
	stop()
	var reqs []fakeprovider.Request
	out := prefixShare{}
	for _, r := range fake.Requests() {
		if r.API != "anthropic" {
			continue
		}
		reqs = append(reqs, r)
		if strings.Contains(r.LastUserText, "[Link Harness: the start of this conversation is leaving your window.") {
			out.summaries++
		}
	}
	prefix, total := fakeprovider.CachedPrefix(reqs)
	if total == 0 {
		return out, fmt.Errorf("the fake provider got no request")
	}
	out.share, out.requests = float64(prefix)/float64(total), len(reqs)
	return out, nil
}

// printPrefix prints the cached prefix measures, with compaction on and
// off.
func printPrefix(w io.Writer, turns int, on, off prefixShare) {
	fmt.Fprintf(w, "cached prefix share: %.3f (%d turns over a %s-token window, compaction at 0.75: %d requests, %d asking for a summary; Anthropic's format, against the fake provider)\n",
		on.share, turns, thousands(prefixWindow), on.requests, on.summaries)
	fmt.Fprintf(w, "cached prefix share with compaction off: %.3f (%d requests)\n", off.share, off.requests)
}
