package mcpserve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lnk-dev/link/contract"
)

// A call's conversation and hops, as Link Harness sends them, and each
// _meta that breaks a rule refused naming it.
func TestOrigin(t *testing.T) {
	for _, tc := range []struct {
		meta   string
		thread string
		hops   int
		err    string
	}{
		{`{"link.local/thread":"link:chat","link.local/hops":2}`, "link:chat", 2, ""},
		{`{"link.local/thread":"telegram:42"}`, "telegram:42", 0, ""},
		{`{}`, "", 0, "names no conversation"},
		{`{"link.local/thread":7}`, "", 0, "names no conversation"},
		{`{"link.local/thread":"../x"}`, "", 0, "thread"},
		{`{"link.local/thread":"link:chat","link.local/hops":-1}`, "", 0, "is a count"},
		{`{"link.local/thread":"link:chat","link.local/hops":1.5}`, "", 0, "is a count"},
		{`{"link.local/thread":"link:chat","link.local/hops":"1"}`, "", 0, "is a count"},
		{`{"link.local/thread":"link:chat","link.local/hops":1e300}`, "", 0, "is a count"},
	} {
		var meta map[string]any
		if err := json.Unmarshal([]byte(tc.meta), &meta); err != nil {
			t.Fatal(err)
		}
		thread, hops, err := Origin(meta)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want a refusal saying %q", tc.meta, err, tc.err)
			}
			continue
		}
		if err != nil || thread != tc.thread || hops != tc.hops {
			t.Errorf("%s: %q %d %v, want %q %d", tc.meta, thread, hops, err, tc.thread, tc.hops)
		}
	}
}

// FuzzOrigin: a call's _meta as a client writes it. Whatever it holds,
// Origin answers a thread id the contract accepts and hops in bounds, or
// refuses.
func FuzzOrigin(f *testing.F) {
	f.Add(`{"link.local/thread":"link:chat","link.local/hops":2}`)
	f.Add(`{"link.local/thread":"telegram:-100/7","link.local/hops":0}`)
	f.Add(`{"link.local/thread":"","link.local/hops":null}`)
	f.Fuzz(func(t *testing.T, s string) {
		var meta map[string]any
		if json.Unmarshal([]byte(s), &meta) != nil {
			return
		}
		thread, hops, err := Origin(meta)
		if err != nil {
			return
		}
		if contract.CheckThread(thread) != nil || hops < 0 || hops > contract.MaxHops {
			t.Fatalf("%s: answered %q %d", s, thread, hops)
		}
	})
}
