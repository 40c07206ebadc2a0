package reference

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"testing"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

func TestRecover(t *testing.T) {
	a := NewAgent()
	ctx := t.Context()
	a.keep("main", "link:a", "one")
	a.keep("main", "link:b", "two")
	a.keep("other", "link:c", "three")

	two, _ := a.Recover(ctx, "main", contract.RecoverParams{TwoPhase: true})
	again, _ := a.Recover(ctx, "main", contract.RecoverParams{TwoPhase: true})
	if len(two.Answers) != 2 || !slices.Equal(two.Answers, again.Answers) || two.Answers[0].ID == "" {
		t.Fatalf("two-phase: %v then %v, want both kept with ids", two.Answers, again.Answers)
	}
	done, _ := a.Recover(ctx, "main", contract.RecoverParams{Done: []string{two.Answers[0].ID, "no-such-id"}})
	if done.Answers == nil || len(done.Answers) != 0 {
		t.Fatalf("done answered %v, want []", done.Answers)
	}
	single, _ := a.Recover(ctx, "main", contract.RecoverParams{})
	if len(single.Answers) != 1 || single.Answers[0].Thread != "link:b" || single.Answers[0].ID != "" {
		t.Fatalf("single: %v, want link:b's alone, no id", single.Answers)
	}
	if left, _ := a.Recover(ctx, "main", contract.RecoverParams{}); len(left.Answers) != 0 {
		t.Fatalf("handed over twice: %v", left.Answers)
	}
	if other, _ := a.Recover(ctx, "other", contract.RecoverParams{}); len(other.Answers) != 1 {
		t.Fatalf("another agent's: %v", other.Answers)
	}
}

func TestNarrow(t *testing.T) {
	a := NewAgent()
	p := func(tools *[]string, header *[]string) []string {
		return a.narrow(acp.Prompt{Agent: "main", Thread: "link:x", Link: contract.LinkMeta{Tools: tools}, Tools: header})
	}
	list := func(s ...string) *[]string { return &s }
	for i, c := range []struct {
		tools, header *[]string
		want          []string
	}{
		{nil, nil, Tools},
		{list("memory__search", "web__fetch"), nil, []string{"memory__search", "web__fetch"}},
		{list("memory__search", "memory__write", "web__fetch"), nil, []string{"memory__search", "web__fetch"}},
		{nil, list("web__fetch"), []string{"web__fetch"}},
		{nil, nil, []string{"memory__search", "web__fetch"}},
		{list(), nil, []string{}},
		{list("memory__search"), nil, []string{}},
	} {
		if got := p(c.tools, c.header); !slices.Equal(got, c.want) {
			t.Errorf("message %d: offered %v, want %v", i, got, c.want)
		}
	}
}

// frames is a framer reading fixed messages.
type frames struct{ in [][]byte }

func (f *frames) ReadMessage(context.Context) ([]byte, error) {
	if len(f.in) == 0 {
		return nil, io.EOF
	}
	b := f.in[0]
	f.in = f.in[1:]
	return b, nil
}
func (f *frames) WriteMessage(context.Context, []byte) error { return nil }
func (f *frames) Close() error                               { return nil }

func TestAcceptBadFrom(t *testing.T) {
	bad := `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"link:x","prompt":[],"_meta":{"link":{"from":"nobody:1","fromName":"X","hops":2}}}}`
	good := `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"link:x","prompt":[],"_meta":{"link":{"from":"person:telegram:1"}}}}`
	f := acceptBadFrom{&frames{in: [][]byte{[]byte(bad), []byte(good)}}}
	out, _ := f.ReadMessage(t.Context())
	var m struct {
		Params struct {
			Meta json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	json.Unmarshal(out, &m)
	said, err := contract.ParseMeta(m.Params.Meta)
	if err != nil || said.From != "" || said.Hops != 2 {
		t.Fatalf("bad from: %s -> %+v, %v; want from dropped, hops kept", out, said, err)
	}
	if out, _ := f.ReadMessage(t.Context()); string(out) != good {
		t.Fatalf("a good from was changed: %s", out)
	}
}

// FuzzAcceptBadFrom: whatever comes, the fault's rewrite never panics,
// and what it rewrites is JSON whose from, if any, names a sender.
func FuzzAcceptBadFrom(f *testing.F) {
	f.Add(`{"method":"session/prompt","params":{"_meta":{"link":{"from":"x"}}}}`)
	f.Add(`{"method":"session/prompt","params":{"_meta":{"link":"x"}}}`)
	f.Add(`{"method":"session/prompt","params":[]}`)
	f.Fuzz(func(t *testing.T, in string) {
		out, err := acceptBadFrom{&frames{in: [][]byte{[]byte(in)}}}.ReadMessage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if string(out) == in {
			return
		}
		var m struct {
			Params struct {
				Meta struct {
					Link map[string]json.RawMessage `json:"link"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("rewrote %q to %q, not JSON: %v", in, out, err)
		}
		if _, ok := m.Params.Meta.Link["from"]; ok {
			t.Fatalf("rewrote %q and kept its from", in)
		}
	})
}
