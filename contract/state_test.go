package contract

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const goodState = `{"version":1,"conversations":[{"thread":"telegram:42","entries":[
	{"role":"user","text":"hi","time":"2026-12-01T10:00:00Z"},
	{"role":"agent","text":"hello"},
	{"role":"user","text":"from Ann","from":"person:telegram:7","fromName":"Ann"}]}]}`

func TestParseStateDocument(t *testing.T) {
	doc, err := ParseStateDocument(json.RawMessage(goodState))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Conversations) != 1 || len(doc.Conversations[0].Entries) != 3 || doc.Conversations[0].Entries[2].FromName != "Ann" || doc.Conversations[0].Entries[0].Time == nil {
		t.Fatalf("read %+v", doc)
	}
	if _, err := ParseStateDocument(json.RawMessage(`{"version":1,"conversations":[],"refused":{"conversations":"none"}}`)); err != nil {
		t.Errorf("an export's answer with refused, taken back in: %v", err)
	}
	for _, c := range []struct{ doc, want string }{
		{`[`, "a state document"},
		{`{"version":2,"conversations":[]}`, "version is 1"},
		{`{"version":1}`, "lists its conversations"},
		{`{"version":1,"conversations":[],"memory":{}}`, `unknown field "memory"`},
		{`{"version":1,"conversations":[]} {}`, "more follows"},
		{`{"version":1,"conversations":[{"thread":"irc:1","entries":[{"role":"user","text":"a"}]}]}`, "connection"},
		{`{"version":1,"conversations":[{"thread":"link:a","entries":[]}]}`, "at least one entry"},
		{`{"version":1,"conversations":[{"thread":"link:a","entries":[{"role":"system","text":"a"}]}]}`, `role is "user" or "agent"`},
		{`{"version":1,"conversations":[{"thread":"link:a","entries":[{"role":"user","text":""}]}]}`, "text is not empty"},
		{`{"version":1,"conversations":[{"thread":"link:a","entries":[{"role":"agent","text":"a","from":"agent:x"}]}]}`, "agent entry has no from"},
		{`{"version":1,"conversations":[{"thread":"link:a","entries":[{"role":"user","text":"a","from":"nobody"}]}]}`, "from is one of"},
		{`{"version":1,"conversations":[{"thread":"link:a","entries":[{"role":"user","text":"a","fromName":"Ann"}]}]}`, "only with from"},
		{`{"version":1,"conversations":[{"thread":"link:a","entries":[{"role":"user","text":"a"}]},{"thread":"link:a","entries":[{"role":"user","text":"a"}]}]}`, "twice"},
		{`{"version":1,"conversations":[{"thread":"link:a","entries":[{"role":"user","text":"a","time":"yesterday"}]}]}`, "a state document"},
		{`{"version":1,"conversations":[{"thread":"link:a","entries":[{"role":"user","text":"` + strings.Repeat("a", MaxStateDocument) + `"}]}]}`, "at most 16777216 bytes"},
	} {
		_, err := ParseStateDocument(json.RawMessage(c.doc))
		var re *RuleError
		if err == nil || !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80s: %v, want a refusal saying %q", c.doc, err, c.want)
		}
	}
}

func TestParseStateExportParams(t *testing.T) {
	for _, raw := range []string{``, `null`, `{}`, `{"threads":[]}`} {
		if p, err := ParseStateExportParams(json.RawMessage(raw)); err != nil || len(p.Threads) != 0 {
			t.Errorf("%q: %+v %v", raw, p, err)
		}
	}
	if p, err := ParseStateExportParams(json.RawMessage(`{"threads":["telegram:1","link:x"]}`)); err != nil || len(p.Threads) != 2 {
		t.Errorf("two threads: %+v %v", p, err)
	}
	for _, raw := range []string{`[]`, `{"thread":["telegram:1"]}`, `{"threads":["irc:1"]}`, `{"threads":"telegram:1"}`, `{"threads":["telegram:1","telegram:1"]}`} {
		if _, err := ParseStateExportParams(json.RawMessage(raw)); err == nil {
			t.Errorf("%q accepted", raw)
		}
	}
}

// FuzzStateDocument: the import's parser refuses with a rule, never
// panics, and what it accepts holds only threads, roles and senders the
// contract takes, and reads the same once written again.
func FuzzStateDocument(f *testing.F) {
	for _, s := range []string{goodState, `{"version":1,"conversations":[]}`, `{"version":1,"conversations":[{"thread":"default","entries":[{"role":"agent","text":"x"}]}]}`, `{`, `{"version":1,"conversations":null}`, `{"version":1.5}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		doc, err := ParseStateDocument(raw)
		if err != nil {
			var re *RuleError
			if !errors.As(err, &re) || re.Rule == "" {
				t.Fatalf("refusal names no rule: %v", err)
			}
			return
		}
		for _, c := range doc.Conversations {
			if CheckThread(c.Thread) != nil || len(c.Entries) == 0 {
				t.Fatalf("accepted %+v", c)
			}
			for _, e := range c.Entries {
				if e.Role != RoleUser && e.Role != RoleAgent || e.Text == "" || e.From != "" && CheckFrom(e.From) != nil {
					t.Fatalf("accepted entry %+v", e)
				}
			}
		}
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseStateDocument(b)
		if err != nil {
			t.Fatalf("written again, refused: %v", err)
		}
		if !reflect.DeepEqual(normal(doc), normal(again)) {
			t.Fatalf("read differently once written: %+v, %+v", doc, again)
		}
	})
}

// normal is doc with its times in UTC, as JSON writes them back.
func normal(doc StateDocument) StateDocument {
	doc.Refused = nil
	for i, c := range doc.Conversations {
		for j, e := range c.Entries {
			if e.Time != nil {
				u := e.Time.UTC().Round(0)
				doc.Conversations[i].Entries[j].Time = &u
			}
		}
	}
	return doc
}
