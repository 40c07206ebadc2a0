package compact

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// chat makes a conversation as a person's with their agent reads: the
// owner's messages and the agent's answers, each of 200 to 2000 bytes of
// English, the answers with the provider's usage, and one turn in four
// calling a tool. The words come from an order-2 Markov chain over
// testdata/corpus.txt (the project's spec), so each message is new text.
type chat struct {
	rng   *rand.Rand
	next  map[[2]string][]string
	start [][2]string // pairs that begin a sentence
	seq   int64
	t     time.Time
	in    int64 // the prompt's tokens, growing with the conversation
}

func newChat(tb testing.TB, seed uint64) *chat {
	b, err := os.ReadFile("testdata/corpus.txt")
	if err != nil {
		tb.Fatal(err)
	}
	words := strings.Fields(string(b))
	c := &chat{
		rng:  rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		next: map[[2]string][]string{},
		t:    time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC),
		in:   3000,
	}
	for i := 0; i+2 < len(words); i++ {
		k := [2]string{words[i], words[i+1]}
		c.next[k] = append(c.next[k], words[i+2])
		if i == 0 || strings.HasSuffix(words[i-1], ".") || strings.HasSuffix(words[i-1], "?") {
			c.start = append(c.start, k)
		}
	}
	return c
}

// text is about n bytes of generated English in paragraphs.
func (c *chat) text(n int) string {
	var b strings.Builder
	k := c.start[c.rng.IntN(len(c.start))]
	b.WriteString(k[0] + " " + k[1])
	for b.Len() < n {
		nexts := c.next[k]
		if len(nexts) == 0 {
			k = c.start[c.rng.IntN(len(c.start))]
			b.WriteString(". " + k[0] + " " + k[1])
			continue
		}
		w := nexts[c.rng.IntN(len(nexts))]
		sep := " "
		if strings.HasSuffix(k[1], ".") && c.rng.IntN(5) == 0 {
			sep = "\n\n"
		}
		b.WriteString(sep + w)
		k = [2]string{k[1], w}
	}
	return b.String()
}

// size is a message's length: 200 to 2000 bytes, shorter ones likelier.
func (c *chat) size() int {
	return 200 + int(1800*c.rng.Float64()*c.rng.Float64())
}

// id is a provider's id of a response or a call: a prefix and random
// letters, as incompressible as real ones.
func (c *chat) id(prefix string, n int) string {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte(prefix)
	for range n {
		b = append(b, letters[c.rng.IntN(len(letters))])
	}
	return string(b)
}

func (c *chat) event(kind store.Kind) store.Event {
	c.seq++
	c.t = c.t.Add(time.Duration(5+c.rng.IntN(600)) * time.Second).Add(time.Duration(c.rng.IntN(1e9)))
	return store.Event{Seq: c.seq, Time: c.t, Kind: kind}
}

func (c *chat) answer(text string) store.Event {
	e := c.event(store.KindAnswer)
	e.Text = text
	e.Model = "anthropic/claude-opus-5-5"
	e.Provider = "anthropic"
	e.ResponseID = c.id("msg_01", 22)
	out := int64(len(text)/4 + c.rng.IntN(40))
	e.Usage = &store.Usage{In: c.in, Out: out, CacheRead: c.in - int64(c.rng.IntN(900)), CacheWrite: int64(c.rng.IntN(900))}
	e.LatencyMS = int64(800 + c.rng.IntN(9000))
	e.CostUSD = float64(c.in)*3e-7 + float64(out)*1.5e-5
	c.in += out + int64(len(text)/4)
	return e
}

// turn is the events of one turn: the owner's message and the answer,
// with a tool's call and its answer between, one turn in four.
func (c *chat) turn() []store.Event {
	m := c.event(store.KindMessage)
	m.Header = c.t.Format("Mon 2 Jan 2006, 15:04") + ", telegram, Ada"
	m.Text = c.text(c.size())
	c.in += int64(len(m.Text) / 4)
	es := []store.Event{m}
	if c.rng.IntN(4) == 0 {
		a := c.answer("")
		call := c.id("toolu_01", 22)
		a.Calls = []store.ToolCall{{ID: call, Name: "memory__search", Input: fmt.Sprintf(`{"query":%q}`, c.text(40))}}
		r := c.event(store.KindToolResult)
		r.CallID, r.Tool, r.Text = call, "memory__search", c.text(c.size())
		es = append(es, a, r)
	}
	return append(es, c.answer(c.text(c.size())))
}

// events is the first n events of the conversation.
func (c *chat) events(n int) []store.Event {
	var es []store.Event
	for len(es) < n {
		es = append(es, c.turn()...)
	}
	return es[:n]
}

func TestChat(t *testing.T) {
	es := newChat(t, 1).events(400)
	var bytes, longest int
	for i, e := range es {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d is #%d", i, e.Seq)
		}
		l, err := store.MarshalLine(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.ParseLine(l); err != nil {
			t.Fatalf("event %d: %v", e.Seq, err)
		}
		bytes += len(l)
		longest = max(longest, len(e.Text))
	}
	if mean := bytes / len(es); mean < 400 || mean > 2000 || longest > 2100 {
		t.Fatalf("events of %d bytes on average, the longest text %d: not a chat's", mean, longest)
	}
	// Different seeds, different words.
	if a, b := newChat(t, 1).text(300), newChat(t, 2).text(300); a == b {
		t.Fatalf("two seeds gave the same text: %q", a)
	}
}
