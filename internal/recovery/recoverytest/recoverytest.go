// Package recoverytest asks _link/recover as Link's bridge does, for the
// tests of Link Harness and of the hub that hold a recover to its
// frame: each ask on a connection of its own, read up to BridgeRead.
package recoverytest

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
)

// BridgeRead is what Link's bridge reads of one message.
const BridgeRead = contract.MaxFrame

// Drained is what Drain took: each thread's answers as handed over, how
// many asks handed over some, and the largest result read.
type Drained struct {
	Got     map[string][]string
	Pages   int
	Largest int
}

// Drain asks _link/recover at the endpoint d names until an ask hands
// over none: two-phase, each page's ids are sent done before the next
// ask. The error is an ask's that failed, with what was taken before it.
func Drain(ctx context.Context, d endpoint.DialOptions, twoPhase bool) (Drained, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	d.ReadLimit = BridgeRead
	out := Drained{Got: map[string][]string{}}
	ask := func(p contract.RecoverParams) (contract.RecoverResult, error) {
		var res contract.RecoverResult
		conn, err := endpoint.Dial(ctx, d)
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
			return res, fmt.Errorf("recover %+v, read up to %d bytes: %w", p, BridgeRead, err)
		}
		out.Largest = max(out.Largest, len(raw))
		return res, json.Unmarshal(raw, &res)
	}
	for range 100 {
		res, err := ask(contract.RecoverParams{TwoPhase: twoPhase})
		if err != nil || len(res.Answers) == 0 {
			return out, err
		}
		out.Pages++
		var ids []string
		for _, a := range res.Answers {
			out.Got[a.Thread] = append(out.Got[a.Thread], a.Text)
			ids = append(ids, a.ID)
		}
		if twoPhase {
			if done, err := ask(contract.RecoverParams{Done: ids}); err != nil || len(done.Answers) != 0 {
				return out, fmt.Errorf("done answered %d answers, %v; want none", len(done.Answers), err)
			}
		}
	}
	return out, fmt.Errorf("recover still handed over answers after 100 asks")
}

// WantAllOnce fails unless got holds each of want's answers (a text by
// thread) exactly once.
func WantAllOnce(t testing.TB, want map[string]string, got map[string][]string) {
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

// PileUp is a case of answers kept past what one message carries: N
// answers of Size bytes each, asked for single phase or two-phase.
type PileUp struct {
	Name     string
	N, Size  int
	TwoPhase bool
}

// PileUps are the cases every keeper of answers is tested at: 40 of
// 500 KB (one per conversation, as after a bridge was away) and two of
// 9 MiB, each single phase and two-phase.
var PileUps = []PileUp{
	{"40x500KB single", 40, 500 << 10, false},
	{"40x500KB two-phase", 40, 500 << 10, true},
	{"2x9MiB single", 2, 9 << 20, false},
	{"2x9MiB two-phase", 2, 9 << 20, true},
}

// Text is the i-th (from 0) answer of a pile-up of answers of size
// bytes: its number, then its letter repeated, between < and > so that
// JSON escapes what it carries.
func Text(i, size int) string {
	return fmt.Sprintf("answer %d <%s>", i+1, strings.Repeat(string(rune('a'+i%26)), size))
}
