package recovery

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// memory is a Store in memory that counts what it let go.
type memory struct {
	list    []Answer
	removed []string
}

func (m *memory) Kept(context.Context) ([]Answer, error) { return slices.Clone(m.list), nil }

func (m *memory) Remove(_ context.Context, ids []string) ([]Answer, error) {
	var gone []Answer
	m.list = slices.DeleteFunc(m.list, func(k Answer) bool {
		if slices.Contains(ids, k.ID) {
			gone = append(gone, k)
			m.removed = append(m.removed, k.ID)
			return true
		}
		return false
	})
	return gone, nil
}

// frame is the response to a recover whose id is MaxRecoverID bytes, as
// acp encodes it.
func frame(t *testing.T, res contract.RecoverResult) []byte {
	t.Helper()
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := json.Marshal(strings.Repeat("i", contract.MaxRecoverID-2))
	b, err := (&acp.Message{ID: id, Result: raw}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPageFitsAFrame: whatever its text's escapes (each '<' or control
// character six bytes), a page is within a frame once encoded with its
// envelope, and an answer too long alone is cut to fit, saying so.
func TestPageFitsAFrame(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("<", 3<<20),             // 18 MiB encoded
		strings.Repeat("\x01é", 2<<20),         // control characters and two-byte runes
		strings.Repeat("a", contract.MaxFrame), // 16 MiB plain
		strings.Repeat("\xff", 3<<20),          // not UTF-8: each a \ufffd
	} {
		for _, twoPhase := range []bool{false, true} {
			m := &memory{list: []Answer{{ID: "a1", Thread: "telegram:1", Text: text}, {ID: "a2", Thread: "telegram:2", Text: "next"}}}
			l := &Ledger{Store: m}
			res, err := l.Recover(t.Context(), contract.RecoverParams{TwoPhase: twoPhase}, nil)
			if err != nil || len(res.Answers) != 1 || !res.More() {
				t.Fatalf("%d answers, more %v, %v: want the first alone, more to come", len(res.Answers), res.More(), err)
			}
			got := res.Answers[0].Text
			start, ok := strings.CutSuffix(got, CutNote)
			if !ok || !strings.HasPrefix(text, start) || len(start) == 0 {
				t.Errorf("text %q…: not a start of the answer and the note", got[:min(len(got), 20)])
			}
			if n := len(frame(t, res)); n > contract.MaxFrame {
				t.Errorf("text %q: frame of %d bytes, over %d, answer %d", text[:3], n, contract.MaxFrame, encodedLen(res.Answers[0]))
			} else if n < contract.MaxFrame-64 {
				t.Errorf("frame of %d bytes: cut more than it had to (%d)", n, contract.MaxFrame)
			}
			if !twoPhase && !slices.Equal(m.removed, []string{"a1"}) {
				t.Errorf("single phase let go %v, want the one sent", m.removed)
			}
		}
	}
}

// TestSinglePhaseForgetsOnlyWhatItSends: of 40 answers of 500 KB, a
// single phase forgets those its page holds and no other; asks after
// hand over the rest, each once, leaving those kept for chat.
func TestSinglePhaseForgetsOnlyWhatItSends(t *testing.T) {
	m := &memory{}
	for i := range 40 {
		m.list = append(m.list, Answer{ID: fmt.Sprint("a", i), Thread: "telegram:1", Text: strings.Repeat("x", 500<<10), ForChat: i == 3})
	}
	l := &Ledger{Store: m}
	seen := map[string]bool{}
	pages := 0
	for {
		before := len(m.removed)
		res, err := l.Recover(t.Context(), contract.RecoverParams{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Answers) == 0 {
			break
		}
		pages++
		if len(m.removed)-before != len(res.Answers) || len(frame(t, res)) > contract.MaxFrame {
			t.Fatalf("page of %d answers let %d go, %d bytes", len(res.Answers), len(m.removed)-before, len(frame(t, res)))
		}
		for _, id := range m.removed[before:] {
			seen[id] = true
		}
		for _, a := range res.Answers {
			if a.ID != "" {
				t.Errorf("single phase sent id %q", a.ID)
			}
		}
	}
	if pages != 2 || len(seen) != 39 || seen["a3"] || len(m.list) != 1 {
		t.Errorf("%d pages handed over %d, %d left; want 2 pages of 39, the one for chat left", pages, len(seen), len(m.list))
	}
}

// TestTwoPhaseRounds: asks that send no done still reach every answer,
// a page at a time, each page starting with those the round hasn't
// handed over yet, then filled with those it has.
func TestTwoPhaseRounds(t *testing.T) {
	m := &memory{}
	for i := range 40 {
		m.list = append(m.list, Answer{ID: fmt.Sprint("a", i), Thread: "link:chat", Text: strings.Repeat("x", 500<<10)})
	}
	l := &Ledger{Store: m}
	count := map[string]int{}
	for ask := range 4 {
		res, err := l.Recover(t.Context(), contract.RecoverParams{TwoPhase: true}, nil)
		if err != nil || !res.More() || len(frame(t, res)) > contract.MaxFrame {
			t.Fatalf("%v, more %v, %d bytes", err, res.More(), len(frame(t, res)))
		}
		for _, a := range res.Answers {
			count[a.ID]++
		}
		if ask == 1 && len(count) != 40 {
			t.Fatalf("two asks reached %d of 40", len(count))
		}
	}
	if len(m.removed) != 0 {
		t.Errorf("asks with no done let %v go", m.removed)
	}
	// A pass leaves an answer out of every page.
	res, _ := l.Recover(t.Context(), contract.RecoverParams{TwoPhase: true}, func(id string) bool { return id != "a7" })
	if len(res.Answers) != 1 || res.Answers[0].ID != "a7" || res.More() {
		t.Errorf("with all but a7 passed over: %+v", res.Answers)
	}
}

// TestTwoPhaseAllWhenTheyFit: answers that fit one page are all handed
// over at every two-phase ask, those handed over before with the new,
// in their order, until a done lets them go.
func TestTwoPhaseAllWhenTheyFit(t *testing.T) {
	m := &memory{list: []Answer{{ID: "a", Thread: "t:1", Text: "1"}, {ID: "b", Thread: "t:1", Text: "2"}}}
	l := &Ledger{Store: m}
	ask := func() []string {
		t.Helper()
		res, err := l.Recover(t.Context(), contract.RecoverParams{TwoPhase: true}, nil)
		if err != nil || res.More() {
			t.Fatalf("%v, more %v", err, res.More())
		}
		var ids []string
		for _, a := range res.Answers {
			ids = append(ids, a.ID)
		}
		return ids
	}
	for range 2 {
		if got := ask(); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("handed over %v, want a and b", got)
		}
	}
	m.list = append(m.list, Answer{ID: "c", Thread: "t:2", Text: "3"})
	if got := ask(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("with c kept after: %v, want a, b, c", got)
	}
	if _, err := l.Recover(t.Context(), contract.RecoverParams{Done: []string{"b"}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := ask(); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("after done b: %v, want a and c", got)
	}
}
