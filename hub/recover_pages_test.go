package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
)

// bridgeRead is what Link's bridge reads of one message.
const bridgeRead = 16 << 20

// TestRecoverPages: answers the hub kept in its answers file past what
// one message carries (40 of 500 KB, as after a bridge was away; two of
// 9 MiB) are handed over in pages, each read whole by a client with the
// bridge's 16 MiB bound: every answer exactly once, none lost, single
// phase and two-phase.
func TestRecoverPages(t *testing.T) {
	for _, c := range []struct {
		name     string
		n, size  int
		twoPhase bool
	}{
		{"40x500KB single", 40, 500 << 10, false},
		{"40x500KB two-phase", 40, 500 << 10, true},
		{"2x9MiB single", 2, 9 << 20, false},
		{"2x9MiB two-phase", 2, 9 << 20, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The file as the hub writes it, written once.
			path := filepath.Join(t.TempDir(), "answers.json")
			doc := answersDoc{Next: c.n}
			want := map[string]string{}
			for i := range c.n {
				thread := fmt.Sprintf("telegram:%d", i+1)
				text := fmt.Sprintf("answer %d <%s>", i+1, strings.Repeat(string(rune('a'+i%26)), c.size))
				doc.Answers = append(doc.Answers, contract.RecoveredAnswer{ID: hubIDPrefix + strconv.Itoa(i+1), Thread: thread, Text: text})
				want[thread] = text
			}
			b, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			r := newRig(t, nil, func(cfg *Config) { cfg.Answers = path })
			got, pages, err := drainRecover(t.Context(), t.Logf, r.url, r.key, c.twoPhase)
			if err != nil {
				t.Fatalf("after %d pages: %v; of %d answers kept, %d handed over, %d left: %d lost", pages, err, c.n, len(got), r.keptCount(), c.n-len(got)-r.keptCount())
			}
			if pages < 2 {
				t.Errorf("%d pages; %d answers of %d bytes don't fit in one", pages, c.n, c.size)
			}
			wantAllOnce(t, want, got)
			if n := r.keptCount(); n != 0 {
				t.Errorf("%d left kept after every page", n)
			}
		})
	}
}

// keptCount is how many answers the hub keeps.
func (r *rig) keptCount() int {
	r.hub.answers.mu.Lock()
	defer r.hub.answers.mu.Unlock()
	return len(r.hub.answers.list)
}

// drainRecover asks _link/recover at url as Link's bridge does, each ask
// on a connection of its own read up to bridgeRead, until an ask hands
// over none: two-phase, each page's ids are sent done before the next
// ask. It returns each thread's answers as handed over, and how many
// asks handed over some; the error is an ask's that failed.
func drainRecover(ctx context.Context, logf func(string, ...any), url string, key []byte, twoPhase bool) (map[string][]string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	largest := 0
	ask := func(p contract.RecoverParams) (contract.RecoverResult, error) {
		var res contract.RecoverResult
		conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key, Agent: "main", ReadLimit: bridgeRead})
		if err != nil {
			return res, err
		}
		c := acp.NewClient(ctx, conn, nil)
		defer c.Close()
		if _, err := c.Initialize(ctx); err != nil {
			return res, err
		}
		raw, err := c.Conn().Call(ctx, contract.MethodRecover, p)
		if err != nil {
			return res, fmt.Errorf("recover %+v, read up to %d bytes: %w", p, bridgeRead, err)
		}
		largest = max(largest, len(raw))
		return res, json.Unmarshal(raw, &res)
	}
	got := map[string][]string{}
	pages := 0
	defer func() { logf("%d pages, the largest result %d bytes (a frame is %d)", pages, largest, bridgeRead) }()
	for range 100 {
		res, err := ask(contract.RecoverParams{TwoPhase: twoPhase})
		if err != nil || len(res.Answers) == 0 {
			return got, pages, err
		}
		pages++
		var ids []string
		for _, a := range res.Answers {
			got[a.Thread] = append(got[a.Thread], a.Text)
			ids = append(ids, a.ID)
		}
		if twoPhase {
			if done, err := ask(contract.RecoverParams{Done: ids}); err != nil || len(done.Answers) != 0 {
				return got, pages, fmt.Errorf("done answered %d answers, %v; want none", len(done.Answers), err)
			}
		}
	}
	return got, pages, fmt.Errorf("recover still handed over answers after 100 asks")
}

// wantAllOnce fails unless got holds each of want's answers exactly once.
func wantAllOnce(t *testing.T, want map[string]string, got map[string][]string) {
	t.Helper()
	lost, twice := 0, 0
	for thread, text := range want {
		switch n := len(got[thread]); {
		case n == 0:
			lost++
		case n > 1:
			twice++
		case got[thread][0] != text:
			t.Errorf("%s: handed over %d bytes, not the %d kept", thread, len(got[thread][0]), len(text))
		}
	}
	if lost > 0 || twice > 0 || len(got) != len(want) {
		t.Errorf("of %d answers kept, %d lost, %d handed over twice, %d threads handed over", len(want), lost, twice, len(got))
	}
}
