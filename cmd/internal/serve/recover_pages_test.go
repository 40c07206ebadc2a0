package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
)

// bridgeRead is what Link's bridge reads of one message.
const bridgeRead = 16 << 20

// TestRecoverPages: answers kept past what one message carries (40 of
// 500 KB, one per conversation, as after a bridge was away; two of
// 9 MiB) are handed over in pages, each read whole by a client with the
// bridge's 16 MiB bound: every answer exactly once, none lost, single
// phase and two-phase.
func TestRecoverPages(t *testing.T) {
	for _, c := range []struct {
		name      string
		n, size   int
		twoPhase  bool
		wantPages int
	}{
		{"40x500KB single", 40, 500 << 10, false, 2},
		{"40x500KB two-phase", 40, 500 << 10, true, 2},
		{"2x9MiB single", 2, 9 << 20, false, 2},
		{"2x9MiB two-phase", 2, 9 << 20, true, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			p, err := store.For(home, contract.DefaultAgent)
			if err != nil {
				t.Fatal(err)
			}
			f := &delivery.Answers{Paths: p}
			want := map[string]string{}
			for i := range c.n {
				thread := fmt.Sprintf("telegram:%d", i+1)
				text := fmt.Sprintf("answer %d <%s>", i+1, strings.Repeat(string(rune('a'+i%26)), c.size))
				if _, err := f.Keep(t.Context(), thread, text, time.Now(), 0); err != nil {
					t.Fatal(err)
				}
				want[thread] = text
			}
			s, _ := startServed(t, func(cfg *Config) { cfg.Home = home })
			got, pages, err := drainRecover(t, s.URL(), c.twoPhase)
			if err != nil {
				left, _ := f.Pending(t.Context())
				t.Fatalf("after %d pages: %v; of %d answers kept, %d handed over, %d left on disk: %d lost", pages, err, c.n, len(got), len(left), c.n-len(got)-len(left))
			}
			if pages < c.wantPages {
				t.Errorf("%d pages; %d answers of %d bytes don't fit in fewer than %d", pages, c.n, c.size, c.wantPages)
			}
			wantAllOnce(t, want, got)
			if left, err := f.Pending(t.Context()); err != nil || len(left) != 0 {
				t.Errorf("left kept after every page: %d, %v", len(left), err)
			}
		})
	}
}

// drainRecover asks _link/recover at url as Link's bridge does, each ask
// on a connection of its own read up to bridgeRead, until an ask hands
// over none: two-phase, each page's ids are sent done before the next
// ask. It returns each thread's answers as handed over, and how many
// asks handed over some; the error is an ask's that failed.
func drainRecover(t *testing.T, url string, twoPhase bool) (map[string][]string, int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	logf := t.Logf
	largest := 0
	ask := func(p contract.RecoverParams) (contract.RecoverResult, error) {
		var res contract.RecoverResult
		conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: testKey, ReadLimit: bridgeRead})
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
