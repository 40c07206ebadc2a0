package contract

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestParseMetaAccepts(t *testing.T) {
	tools := []string{"memory__search", "run__command"}
	none := []string{}
	yes := true
	for _, tc := range []struct {
		meta string
		want LinkMeta
	}{
		{``, LinkMeta{}},
		{`null`, LinkMeta{}},
		{`{}`, LinkMeta{}},
		{`{"other":1}`, LinkMeta{}},
		{`{"link":{}}`, LinkMeta{}},
		{`{"link":{"from":"person:telegram:42","fromName":"Alice 🌸","hops":0}}`, LinkMeta{From: "person:telegram:42", FromName: "Alice 🌸"}},
		{`{"link":{"from":"person:slack:T0ACME/U0ALICE","hops":3}}`, LinkMeta{From: "person:slack:T0ACME/U0ALICE", Hops: 3}},
		{`{"link":{"from":"schedule:daily-7"}}`, LinkMeta{From: "schedule:daily-7"}},
		{`{"link":{"from":"webhook:github"}}`, LinkMeta{From: "webhook:github"}},
		{`{"link":{"from":"run:r1","hops":1.0}}`, LinkMeta{From: "run:r1", Hops: 1}},
		{`{"link":{"tools":["memory__search","run__command","memory__search"]}}`, LinkMeta{Tools: &tools}},
		{`{"link":{"tools":[]}}`, LinkMeta{Tools: &none}},
		{`{"link":{"model":"anthropic/claude-opus-5.5"}}`, LinkMeta{Model: "anthropic/claude-opus-5.5"}},
		{`{"link":{"model":"ollama/qwen3:8b"}}`, LinkMeta{Model: "ollama/qwen3:8b"}},
		{`{"link":{"activity":true,"steered":true}}`, LinkMeta{Activity: &yes, Steered: true}},
	} {
		got, err := ParseMeta(json.RawMessage(tc.meta))
		if err != nil {
			t.Errorf("ParseMeta(%s) = %v", tc.meta, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseMeta(%s) = %+v, want %+v", tc.meta, got, tc.want)
		}
	}
}

// TestParseMetaRefuses is the table of refusals: each names its rule.
func TestParseMetaRefuses(t *testing.T) {
	many := make([]string, 257)
	for i := range many {
		many[i] = "t"
	}
	manyJSON, _ := json.Marshal(many)
	for _, tc := range []struct{ meta, field, rule string }{
		{`[]`, "_meta", "is an object"},
		{`{"link":[]}`, "_meta.link", "is an object"},
		{`{"link":null}`, "_meta.link", "is an object"},
		{`{"link":"x"}`, "_meta.link", "is an object"},
		{`{"link":{"form":"x"}}`, "_meta.link", "not one of Link's"},
		{`{"link":{"from":"stranger:1"}}`, "from", "from is one of"},
		{`{"link":{"from":"person:42"}}`, "from", "person:<connection>:<user id>"},
		{`{"link":{"from":"person:Telegram:42"}}`, "from", "person:<connection>:<user id>"},
		{`{"link":{"from":"schedule:"}}`, "from", "id is 1 to"},
		{`{"link":{"from":"agent:a b"}}`, "from", "id is 1 to"},
		{`{"link":{"from":42}}`, "from", "is a string"},
		{`{"link":{"from":null}}`, "from", "is a string"},
		{`{"link":{"from":"person:telegram:1","fromName":"` + strings.Repeat("é", 65) + `"}}`, "fromName", "1 to 64"},
		{`{"link":{"from":"person:telegram:1","fromName":""}}`, "fromName", "1 to 64"},
		{`{"link":{"from":"person:telegram:1","fromName":"a\u0007b"}}`, "fromName", "control"},
		{`{"link":{"from":"person:telegram:1","fromName":"a\nb"}}`, "fromName", "control"},
		{`{"link":{"from":"person:telegram:1","fromName":"a\u2028b"}}`, "fromName", "control"},
		{`{"link":{"from":"person:telegram:1","fromName":"Grace\u202egnp.exe"}}`, "fromName", "format character (U+202E)"},
		{`{"link":{"from":"person:telegram:1","fromName":"Gr\u200bace"}}`, "fromName", "format character (U+200B)"},
		{`{"link":{"from":"person:telegram:1","fromName":"\ufeffGrace"}}`, "fromName", "format character (U+FEFF)"},
		{`{"link":{"from":"person:telegram:1","fromName":"Gr\ud800ace"}}`, "fromName", "plain UTF-8"},
		{"{\"link\":{\"from\":\"person:telegram:1\",\"fromName\":\"Gr\xffce\"}}", "fromName", "plain UTF-8"},
		{"{\"link\":{\"from\":\"person:telegram:1\",\"fromName\":\"Gr\xef\xbf\xbdce\"}}", "fromName", "plain UTF-8"},
		{`{"link":{"fromName":"Alice"}}`, "fromName", "only with from"},
		{`{"link":{"hops":-1}}`, "hops", "non-negative integer"},
		{`{"link":{"hops":1.5}}`, "hops", "non-negative integer"},
		{`{"link":{"hops":"1"}}`, "hops", "non-negative integer"},
		{`{"link":{"hops":99999999999999999999}}`, "hops", "at most"},
		{`{"link":{"hops":1e400}}`, "hops", "non-negative integer"},
		{`{"link":{"tools":"memory__search"}}`, "tools", "a list of names"},
		{`{"link":{"tools":null}}`, "tools", "a list of names"},
		{`{"link":{"tools":{}}}`, "tools", "a list of names"},
		{`{"link":{"tools":[1]}}`, "tools", "each a string"},
		{`{"link":{"tools":[""]}}`, "tools", "1 to 128"},
		{`{"link":{"tools":["a b"]}}`, "tools", "1 to 128"},
		{`{"link":{"tools":["` + strings.Repeat("a", 129) + `"]}}`, "tools", "1 to 128"},
		{`{"link":{"tools":` + string(manyJSON) + `}}`, "tools", "at most 256"},
		{`{"link":{"model":""}}`, "model", "1 to 128"},
		{`{"link":{"model":"gpt 5"}}`, "model", "1 to 128"},
		{`{"link":{"model":"` + strings.Repeat("m", 129) + `"}}`, "model", "1 to 128"},
		{`{"link":{"steered":"yes"}}`, "steered", "true or false"},
		{`{"link":{"activity":1}}`, "activity", "true or false"},
	} {
		_, err := ParseMeta(json.RawMessage(tc.meta))
		var re *RuleError
		if !errors.As(err, &re) {
			t.Errorf("ParseMeta(%.80s) = %v, want a refusal", tc.meta, err)
			continue
		}
		if re.Field != tc.field || !strings.Contains(re.Rule, tc.rule) {
			t.Errorf("ParseMeta(%.80s) = %q, want %s: ...%s...", tc.meta, err, tc.field, tc.rule)
		}
	}
}

func TestNarrow(t *testing.T) {
	list := func(s ...string) *[]string { return &s }
	for _, tc := range []struct{ kept, said, want *[]string }{
		{nil, nil, nil},
		{nil, list("a", "b"), list("a", "b")},
		{list("a", "b"), nil, list("a", "b")},
		{list("a", "b"), list("b", "c"), list("b")},
		{list("a"), list("a", "b", "c"), list("a")},
		{list("a", "b"), &[]string{}, &[]string{}},
		{&[]string{}, list("a"), &[]string{}},
	} {
		got := Narrow(tc.kept, tc.said)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Narrow(%v, %v) = %v, want %v", deref(tc.kept), deref(tc.said), deref(got), deref(tc.want))
		}
	}
	if !Allowed(nil, "x") || Allowed(list("a"), "x") || !Allowed(list("a"), "a") {
		t.Error("Allowed disagrees with narrowing")
	}
}

func deref(p *[]string) any {
	if p == nil {
		return "<all>"
	}
	return *p
}

func TestParseToolsHeader(t *testing.T) {
	got, err := ParseToolsHeader(" memory__search, run__command ,memory__search")
	if err != nil || !reflect.DeepEqual(got, []string{"memory__search", "run__command"}) {
		t.Fatalf("ParseToolsHeader = %v, %v", got, err)
	}
	if got, err := ParseToolsHeader(""); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty header = %v, %v; want an empty list", got, err)
	}
	if _, err := ParseToolsHeader("a,,b"); err == nil || !strings.Contains(err.Error(), "Link-Tools") {
		t.Fatalf("ParseToolsHeader(a,,b) = %v", err)
	}
}

func TestParseRecoverParams(t *testing.T) {
	for raw, want := range map[string]RecoverParams{
		``:                   {},
		`null`:               {},
		`{}`:                 {},
		`{"two_phase":true}`: {TwoPhase: true},
		`{"done":["a","b"]}`: {Done: []string{"a", "b"}},
	} {
		got, err := ParseRecoverParams(json.RawMessage(raw))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseRecoverParams(%s) = %+v, %v", raw, got, err)
		}
	}
	for _, bad := range []string{`[]`, `"x"`, `{"two_phase":"yes"}`, `{"done":"a"}`, `{"done":[1]}`, `{"two_phase":false,"x":1}`, `{"twophase":true}`} {
		if _, err := ParseRecoverParams(json.RawMessage(bad)); err == nil {
			t.Errorf("ParseRecoverParams(%s) accepted", bad)
		}
	}
	b, _ := json.Marshal(RecoverResult{})
	if string(b) != `{"answers":null}` && string(b) != `{"answers":[]}` {
		t.Fatalf("empty result marshals as %s", b)
	}
}

// FuzzLinkMeta proves ParseMeta never panics, refuses with a named rule, and
// that whatever it accepts obeys every bound of _meta.link.
func FuzzLinkMeta(f *testing.F) {
	for _, s := range []string{`{"link":{"from":"person:telegram:42","fromName":"A","hops":2,"tools":["a"],"model":"m"}}`, `{"link":[]}`, `{"link":{"tools":null}}`, `[`, `{"link":{"hops":1e3}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := ParseMeta(raw)
		if err != nil {
			var re *RuleError
			if !errors.As(err, &re) || re.Rule == "" {
				t.Fatalf("refusal names no rule: %v", err)
			}
			return
		}
		if s.From != "" && CheckFrom(s.From) != nil || s.FromName != "" && CheckFromName(s.FromName) != nil {
			t.Fatalf("accepted a bad sender: %+v", s)
		}
		if s.Hops < 0 || s.Model != "" && CheckModel(s.Model) != nil {
			t.Fatalf("accepted %+v", s)
		}
		if s.Tools != nil {
			if len(*s.Tools) > MaxTools {
				t.Fatalf("accepted %d tools", len(*s.Tools))
			}
			for _, n := range *s.Tools {
				if CheckToolName(n) != nil {
					t.Fatalf("accepted tool %q", n)
				}
			}
		}
	})
}

// FuzzFromName proves that no fromName a prompt's _meta.link carries
// passes with a control character, a format character, a line or
// paragraph separator, U+FFFD or invalid UTF-8, whatever its bytes and
// escapes, checked against Unicode's tables rather than CheckFromName.
func FuzzFromName(f *testing.F) {
	for _, s := range []string{"Grace", "Gr\\u202eace", "\\u200b", "a\\u0000b", "Gr\xffce", "\\ud800", "\\ufeff", "Alice 🌸", "\\u00ad", "\\U0001D173"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		raw := `{"link":{"from":"person:telegram:1","fromName":"` + name + `"}}`
		s, err := ParseMeta(json.RawMessage(raw))
		if err != nil {
			return
		}
		if !utf8.ValidString(name) || !utf8.ValidString(s.FromName) {
			t.Fatalf("accepted invalid UTF-8: %q -> %q", name, s.FromName)
		}
		for _, r := range s.FromName {
			if r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
				t.Fatalf("accepted fromName %q holding U+%04X", s.FromName, r)
			}
		}
	})
}

func FuzzRecoverParams(f *testing.F) {
	f.Add([]byte(`{"two_phase":true,"done":["x"]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := ParseRecoverParams(raw)
		if err == nil && len(p.Done) > MaxDone {
			t.Fatalf("accepted %d ids", len(p.Done))
		}
	})
}
