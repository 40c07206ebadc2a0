package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// ruleNamed fails t unless err is a refusal naming the rule it broke.
func ruleNamed(t *testing.T, err error) {
	t.Helper()
	var re *RuleError
	if !errors.As(err, &re) || re.Field == "" || re.Rule == "" {
		t.Fatalf("refusal names no rule: %v", err)
	}
}

// FuzzToolsHeader proves a Link-Tools header, as a peer sends it, never
// panics ParseToolsHeader, is refused with a named rule, and that what it
// accepts is at most MaxTools good names, none twice, that read the same
// when written back as a header.
func FuzzToolsHeader(f *testing.F) {
	for _, s := range []string{"", " ", "a", "a, b ,a", "a,,b", "mem__search,fs__read", "a b", strings.Repeat("x,", MaxTools+1), "\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tools, err := ParseToolsHeader(h)
		if err != nil {
			ruleNamed(t, err)
			return
		}
		if tools == nil || len(tools) > MaxTools {
			t.Fatalf("accepted %d tools (nil %v)", len(tools), tools == nil)
		}
		for i, n := range tools {
			if CheckToolName(n) != nil || slices.Contains(tools[:i], n) {
				t.Fatalf("accepted tool %q in %q", n, tools)
			}
		}
		again, err := ParseToolsHeader(strings.Join(tools, ","))
		if err != nil || !slices.Equal(again, tools) {
			t.Fatalf("%q read back as %q, %v", tools, again, err)
		}
	})
}

// FuzzParseKey proves a key file's bytes never panic ParseKey, are refused
// with a named rule, and that a key it accepts is 1 to MaxKey printable
// ASCII bytes with no space, read the same from a file holding it and a
// newline.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"k", "k\n", "k\r\n", "k\n\n", "a b", "", "\n", strings.Repeat("k", MaxKey+1), "ké"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		key, err := ParseKey(b)
		if err != nil {
			ruleNamed(t, err)
			return
		}
		if len(key) == 0 || len(key) > MaxKey {
			t.Fatalf("accepted a key %d bytes long", len(key))
		}
		for _, c := range key {
			if c < 0x21 || c > 0x7e {
				t.Fatalf("accepted byte %#x in a key", c)
			}
		}
		again, err := ParseKey(append(bytes.Clone(key), '\n'))
		if err != nil || !bytes.Equal(again, key) {
			t.Fatalf("key %q read back as %q, %v", key, again, err)
		}
	})
}

// FuzzStateExportParams proves _link/state/export's params, from a peer,
// never panic ParseStateExportParams, are refused with a named rule, and
// that what it accepts names at most MaxStateConversations good threads
// and reads the same when encoded again.
func FuzzStateExportParams(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"threads":["telegram:42"]}`, `{"threads":[""]}`, `{"threads":null}`, `{"thread":[]}`, `{} {}`, `[]`, `{"threads":["a/../b"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := ParseStateExportParams(raw)
		if err != nil {
			ruleNamed(t, err)
			return
		}
		if len(p.Threads) > MaxStateConversations {
			t.Fatalf("accepted %d threads", len(p.Threads))
		}
		for _, th := range p.Threads {
			if CheckThread(th) != nil {
				t.Fatalf("accepted thread %q", th)
			}
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseStateExportParams(b)
		if err != nil || !slices.Equal(again.Threads, p.Threads) {
			t.Fatalf("%s read back as %+v, %v (was %+v)", b, again, err, p)
		}
	})
}

// FuzzKeyMatches proves an Authorization header, as a peer sends it,
// matches a key exactly when it is the key as a bearer token, and that
// the endpoint's proof, as a server sends it, verifies exactly when it is
// Proof's own lower-case hex.
func FuzzKeyMatches(f *testing.F) {
	for _, s := range [][3]string{{"secret", "Bearer secret", "x"}, {"secret", "bearer secret", ""}, {"secret", "Bearer secret ", "AB"}, {"", "Bearer ", ""}, {"k", "Bearer  k", "00"}} {
		f.Add([]byte(s[0]), s[1], "challenge", s[2])
	}
	f.Fuzz(func(t *testing.T, key []byte, authorization, challenge, proof string) {
		want := len(key) > 0 && authorization == BearerPrefix+string(key)
		if got := KeyMatches(key, authorization); got != want {
			t.Fatalf("KeyMatches(%q, %q) = %v", key, authorization, got)
		}
		if got := VerifyProof(key, challenge, proof); got != (proof == Proof(key, challenge)) {
			t.Fatalf("VerifyProof(%q, %q, %q) = %v", key, challenge, proof, got)
		}
		if !VerifyProof(key, challenge, Proof(key, challenge)) {
			t.Fatalf("key %q's own proof of %q refused", key, challenge)
		}
	})
}

// FuzzMessageOnce proves a prompt's _meta never panics ParseMessageOnce,
// is refused with a named rule, and that what it accepts is a good id and
// a time that read the same when written back.
func FuzzMessageOnce(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `[]`, `{"link":{}}`,
		`{"link.local/message":{"id":"schedule:r1.3","since":"2026-12-07T10:00:00.5Z"}}`,
		`{"link.local/message":{"id":"r1","since":"2026-12-07T10:00:00+01:00"}}`,
		`{"link.local/message":{"id":"r1","since":"2026-12-07T10:00:00Z","recover":true}}`,
		`{"link.local/message":{"id":"r1","since":"2026-12-07T10:00:00Z","recover":1}}`,
		`{"link.local/message":{"id":"a b","since":"2026-12-07T10:00:00Z"}}`,
		`{"link.local/message":{"id":"r1"}}`, `{"link.local/message":"r1"}`,
		`{"link.local/message":{"id":"r1","since":"2026-12-07T10:00:00Z","x":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, meta []byte) {
		m, ok, err := ParseMessageOnce(meta)
		if err != nil {
			ruleNamed(t, err)
			return
		}
		if !ok {
			return
		}
		if CheckMessageID(m.ID) != nil || m.Since.Location() != time.UTC {
			t.Fatalf("accepted %+v", m)
		}
		b, _ := json.Marshal(map[string]MessageOnce{MessageMeta: m})
		again, ok, err := ParseMessageOnce(b)
		if err != nil || !ok || again.ID != m.ID || !again.Since.Equal(m.Since) || again.Recover != m.Recover {
			t.Fatalf("%+v read back as %+v, %v", m, again, err)
		}
	})
}
