package acp

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/lnk-dev/link/contract"
)

// FuzzCheckPrompt proves session/prompt's params, from a peer, never
// panic checkPrompt, are refused with a named rule or a JSON-RPC error,
// and that a prompt it builds is of a session open on the connection,
// with blocks that DecodeBlocks reads the same once encoded again.
func FuzzCheckPrompt(f *testing.F) {
	for _, s := range []string{
		`{"sessionId":"telegram:1","prompt":[{"type":"text","text":"hi"}]}`,
		`{"sessionId":"telegram:1","prompt":[{"type":"text","text":"hi"}],"_meta":{"link":{"from":"person:telegram:7","hops":1}}}`,
		`{"sessionId":"telegram:2","prompt":[]}`,
		`{"sessionId":null,"prompt":[]}`,
		`{"sessionId":"telegram:1","sessionId":"x","prompt":[]}`,
		`{"SessionId":"telegram:1","prompt":[]}`,
		`{"sessionId":"telegram:1","prompt":{}}`,
		`{"sessionId":1}`,
		`[]`, `null`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		if !json.Valid(params) {
			return // DecodeMessage refused it first
		}
		s := &server{agent: "main", initialized: true, sessions: map[string]bool{"telegram:1": true}}
		p, err := s.checkPrompt(params)
		if err != nil {
			var re *contract.RuleError
			var je *Error
			if !(errors.As(err, &re) && re.Rule != "") && !(errors.As(err, &je) && je.Message != "") {
				t.Fatalf("refused %s naming no rule: %v", params, err)
			}
			return
		}
		if p.Thread != "telegram:1" || p.Agent != "main" {
			t.Fatalf("%s read as a prompt of %q to %q", params, p.Thread, p.Agent)
		}
		b, err := json.Marshal(p.Blocks)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeBlocks(b)
		if err != nil || len(again) != len(p.Blocks) {
			t.Fatalf("blocks %s read back as %d, %v (were %d)", b, len(again), err, len(p.Blocks))
		}
		if b2, _ := json.Marshal(again); string(b2) != string(b) {
			t.Fatalf("blocks %s read back as %s", b, b2)
		}
	})
}
