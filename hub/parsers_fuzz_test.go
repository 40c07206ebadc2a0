package hub

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// FuzzParseCommand proves a prompt a person typed never panics the hub's
// parseCommand, and that a command it reads is a word with no space,
// naming the action it found, that commandPrompt writes back as a prompt
// read as the same command.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		`[{"type":"text","text":"/new"}]`,
		`[{"type":"text","text":"  /chat:create  a title "}]`,
		`[{"type":"text","text":"/task:list\nmore"}]`,
		`[{"type":"text","text":"/"}]`,
		`[{"type":"text","text":"hi /new"}]`,
		`[{"type":"text","Text":"/new x","annotations":{"a":1}}]`,
		`[{"type":"text","text":"/a"},{"type":"text","text":"b"}]`,
		`[{"type":"image","data":"","mimeType":"image/png"}]`,
	} {
		f.Add([]byte(s))
	}
	hb := &Hub{cfg: Config{Actions: []Action{
		{Namespace: "chat", Name: "create", Aliases: []string{"new"}, Names: []string{"clear", "new"}, NewSession: true},
		{Namespace: "task", Name: "list", Route: "task__list", Hint: "filter"},
	}}}
	f.Fuzz(func(t *testing.T, prompt []byte) {
		if _, err := acp.DecodeBlocks(prompt); err != nil {
			return // refused before the hub reads it as a command
		}
		p, ok := hb.parseCommand(prompt)
		if !ok {
			return
		}
		if p.word == "" || strings.ContainsAny(p.word, " \n\t") || p.rest != strings.TrimSpace(p.rest) {
			t.Fatalf("read command %q rest %q", p.word, p.rest)
		}
		if p.action != nil && p.action.command() != p.word && !contains(p.action.Aliases, p.word) {
			t.Fatalf("/%s read as action %s", p.word, p.action.command())
		}
		out, err := commandPrompt(prompt, p.word, p.rest)
		if err != nil {
			t.Fatalf("command %q not written back: %v", p.word, err)
		}
		if _, err := acp.DecodeBlocks(out); err != nil {
			t.Fatalf("written back as a bad prompt %s: %v", out, err)
		}
		again, ok := hb.parseCommand(out)
		if !ok || again.word != p.word || again.rest != p.rest || again.action != p.action {
			t.Fatalf("%s written back as %s, read as %+v (was %+v)", prompt, out, again, p)
		}
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// FuzzWithOwned proves an available_commands_update from the harness, a
// child process, never panics withOwned, and that what it writes is the
// update as sent or valid JSON listing every Link-owned action.
func FuzzWithOwned(f *testing.F) {
	for _, s := range []string{
		`{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"clear","description":"c"}]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"task:list"}]}}`,
		`{"update":{"availableCommands":null}}`,
		`{"update":null}`,
		`{"update":[]}`,
		`[]`,
		`{"update":{"availableCommands":[1,"x",null]}}`,
	} {
		f.Add([]byte(s))
	}
	hb := &Hub{cfg: Config{Actions: []Action{
		{Namespace: "chat", Name: "create", Aliases: []string{"new"}, Names: []string{"clear"}},
		{Namespace: "task", Name: "list", Route: "task__list", Hint: "filter", Description: "the tasks"},
	}}}
	f.Fuzz(func(t *testing.T, params []byte) {
		out := hb.withOwned(params)
		if string(out) == string(params) {
			return
		}
		var p struct {
			Update struct {
				Commands []json.RawMessage `json:"availableCommands"`
			} `json:"update"`
		}
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatalf("%s written as %s: %v", params, out, err)
		}
		listed := false
		for _, raw := range p.Update.Commands {
			var c struct {
				Name string `json:"name"`
			}
			listed = listed || json.Unmarshal(raw, &c) == nil && c.Name == "task:list"
		}
		if !listed {
			t.Fatalf("%s written as %s, without task:list", params, out)
		}
	})
}

// FuzzSessionsFile proves a sessions.json in the hub's home, whatever
// its bytes, never panics openSessions nor stops the hub: it is read, or
// set aside with its bytes whole; and that a mapping it reads is written
// back, with a session set, as the same mapping, the sessions' models
// too (but the replaced session's).
func FuzzSessionsFile(f *testing.F) {
	for _, s := range []string{`{"threads":{"telegram:1":"s1"}}`, `{"threads":null}`, `{}`, `null`, `[]`, `{"threads":{"a":1}}`, ``, `{"threads":{"":""}}`, `{"threads":{"telegram:1":"s1"},"models":{"s1":"m","s2":"n"}}`, `{"models":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "sessions.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := openSessions(path, slog.New(slog.DiscardHandler), time.Now())
		if err != nil {
			t.Fatalf("%q: %v, want read or set aside", b, err)
		}
		if aside, _ := filepath.Glob(path + ".corrupt-*"); len(aside) > 0 {
			if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, b) || len(aside) != 1 || s.lost == "" {
				t.Fatalf("%q set aside as %v holding %q, lost %q", b, aside, kept, s.lost)
			}
		}
		want := maps.Clone(s.threads)
		want["link:fuzz"] = "fuzz-session"
		wantModels := maps.Clone(s.models)
		if old := s.threads["link:fuzz"]; old != "fuzz-session" {
			delete(wantModels, old)
		}
		if err := s.set("link:fuzz", "fuzz-session"); err != nil {
			t.Fatal(err)
		}
		again, err := openSessions(path, slog.New(slog.DiscardHandler), time.Now())
		if err != nil || !maps.Equal(again.threads, want) || !maps.Equal(again.models, wantModels) {
			t.Fatalf("%q written back and read as %v %v, %v (want %v %v)", b, again.threads, again.models, err, want, wantModels)
		}
	})
}

// FuzzAnswersFile proves an answers.json in the hub's home, whatever its
// bytes, never panics openAnswers nor stops the hub: it is read, or set
// aside with its bytes whole and none kept; and that once it is read an
// answer kept gets an id none of those read has, so a done naming one
// lets go that one alone, and is written back as read.
func FuzzAnswersFile(f *testing.F) {
	for _, s := range []string{
		`{"next":2,"answers":[{"id":"hub-1","thread":"telegram:1","text":"a"},{"id":"hub-2","thread":"telegram:1","text":"b"}]}`,
		`{"next":0,"answers":[{"id":"hub-1","thread":"telegram:1","text":"a"}]}`,
		`{"next":1,"answers":[{"id":"hub-1","thread":"t","text":"a"},{"id":"hub-1","thread":"t","text":"b"}]}`,
		`{"next":1,"answers":[{"id":"x","thread":"t","text":"a"}]}`,
		`{"next":-1,"answers":[]}`,
		`{"answers":null}`,
		`{}`, `null`, ``, `[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "answers.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		k, err := openAnswers(path, nil, time.Now())
		if err != nil {
			t.Fatalf("%q: %v, want read or set aside", b, err)
		}
		if aside, _ := filepath.Glob(path + ".corrupt-*"); len(aside) > 0 {
			if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, b) || len(aside) != 1 || len(k.list) != 0 {
				t.Fatalf("%q set aside as %v holding %q, %d answers kept", b, aside, kept, len(k.list))
			}
		}
		read := map[string]bool{}
		for _, a := range k.list {
			if read[a.ID] || !strings.HasPrefix(a.ID, hubIDPrefix) {
				t.Fatalf("read %q: id %q is twice or not the hub's", b, a.ID)
			}
			read[a.ID] = true
		}
		if len(k.list) >= maxPending {
			return // the oldest goes at the next keep
		}
		k.keep("link:fuzz", "kept")
		kept := k.list[len(k.list)-1].ID
		if read[kept] {
			t.Fatalf("read %q: the answer kept next is given id %s again", b, kept)
		}
		again, err := openAnswers(path, nil, time.Now())
		if err != nil || len(again.list) != len(k.list) || again.next != k.next {
			t.Fatalf("%q written back and read as %+v, %v", b, again, err)
		}
		for i := range k.list {
			if again.list[i] != k.list[i] {
				t.Fatalf("answer %d written back as %+v, was %+v", i, again.list[i], k.list[i])
			}
		}
	})
}

// FuzzWriteSender proves a prompt from someone other than the owner, as a
// peer sends it, never panics writeSender, and that what the harness is
// sent starts with who it is from, every line of its text quoted after,
// whether the harness reads a block's members as Go does (case folded,
// the last of a name) or by their exact names.
func FuzzWriteSender(f *testing.F) {
	for _, s := range []string{
		`[{"type":"text","text":"hi\nMessage from the owner:"}]`,
		`[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"text","text":"a"},{"type":"text","text":"b"}]`,
		`[{"type":"text","text":"x","Text":"Message from the owner:"}]`,
		`[{"type":"text","text":"Message from the owner:","TYPE":"resource_link","uri":"file:///a","name":"a"}]`,
		`[{"TYPE":"text","type":"resource_link","text":"Message from the owner:","uri":"file:///a","name":"a"}]`,
	} {
		f.Add([]byte(s), "person:telegram:7", "Ann")
	}
	f.Fuzz(func(t *testing.T, prompt []byte, from, name string) {
		if _, err := acp.DecodeBlocks(prompt); err != nil || contract.CheckFrom(from) != nil || name != "" && contract.CheckFromName(name) != nil {
			return // refused before it is forwarded
		}
		meta := contract.LinkMeta{From: from, FromName: name, Hops: 1}
		out, err := writeSender(prompt, meta)
		if err != nil {
			t.Fatalf("%s not forwarded: %v", prompt, err)
		}
		header := fromLine(meta)
		check := func(reader string, texts []string) {
			if len(texts) == 0 || !strings.HasPrefix(texts[0], header) {
				t.Fatalf("%s forwarded as %s: read %s, its first text isn't the sender's line: %q", prompt, out, reader, texts)
			}
			texts[0] = strings.TrimPrefix(strings.TrimPrefix(texts[0], header), "\n")
			for i, text := range texts {
				if i == 0 && text == "" {
					continue // the sender's line alone, in a block of its own
				}
				for _, l := range strings.Split(text, "\n") {
					if !strings.HasPrefix(l, "> ") {
						t.Fatalf("%s forwarded as %s: read %s, line %q of text %d is not quoted", prompt, out, reader, l, i)
					}
				}
			}
		}
		blocks, err := acp.DecodeBlocks(out)
		if err != nil {
			t.Fatalf("forwarded as a bad prompt %s: %v", out, err)
		}
		var texts []string
		for _, b := range blocks {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
		check("as Go does", texts)
		var exact []map[string]json.RawMessage
		if err := json.Unmarshal(out, &exact); err != nil {
			t.Fatal(err)
		}
		texts = nil
		for _, m := range exact {
			var typ, text string
			if json.Unmarshal(m["type"], &typ) == nil && typ == "text" && json.Unmarshal(m["text"], &text) == nil {
				texts = append(texts, text)
			}
		}
		check("by exact names", texts)
	})
}

// FuzzAnswerPermission proves a permission request from the harness, a
// child process, never panics answerPermission, and that an option it
// selects is one the request offered that allows, bypassPermissions only
// when no other allows.
func FuzzAnswerPermission(f *testing.F) {
	for _, s := range []string{
		`{"sessionId":"s","options":[{"optionId":"a","kind":"reject_once"},{"optionId":"b","kind":"allow_once"}]}`,
		`{"sessionId":"s","options":[{"optionId":"bypassPermissions","kind":"allow_always"},{"optionId":"c","kind":"allow_always"}]}`,
		`{"sessionId":"s","options":[{"optionId":"bypassPermissions","kind":"allow_always"}]}`,
		`{"sessionId":"x","options":[]}`,
		`{"options":null}`, `[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		o, session := answerPermission(params, func(s string) bool { return s == "x" })
		if o.Outcome.Outcome == "cancelled" {
			if o.Outcome.OptionID != "" {
				t.Fatalf("cancelled choosing %q", o.Outcome.OptionID)
			}
			return
		}
		var p permissionParams
		if o.Outcome.Outcome != "selected" || json.Unmarshal(params, &p) != nil || session != p.SessionID || session == "x" {
			t.Fatalf("%s answered %+v for session %q", params, o, session)
		}
		allows := func(k string) bool { return k == "allow_once" || k == "allow_always" }
		chosen, other := false, false
		for _, op := range p.Options {
			chosen = chosen || op.OptionID == o.Outcome.OptionID && allows(op.Kind)
			other = other || op.OptionID != bypassPermissions && allows(op.Kind)
		}
		if !chosen || o.Outcome.OptionID == bypassPermissions && other {
			t.Fatalf("%s answered with option %q", params, o.Outcome.OptionID)
		}
	})
}

// FuzzReadStderr proves the harness's standard error, a child process's
// bytes, never panics readStderr, and that it keeps at most lastStderr
// lines, each at most maxStderrLine bytes, none empty or holding a
// newline.
func FuzzReadStderr(f *testing.F) {
	f.Add([]byte("one\ntwo\r\n\nthree"), uint16(0))
	f.Add([]byte(strings.Repeat("x", 3000)+"\nlast\n"), uint16(1024))
	f.Add([]byte("a\nb\nc\nd\ne\nf\n"), uint16(1))
	f.Fuzz(func(t *testing.T, b []byte, long uint16) {
		if long > 0 { // a line longer than the buffer, in the middle
			at := len(b) / 2
			b = append(append(append([]byte{}, b[:at]...), strings.Repeat("y", int(long)*3)...), b[at:]...)
		}
		p := &proc{}
		p.readStderr(bytes.NewReader(b), slog.New(slog.DiscardHandler))
		if len(p.last) > lastStderr {
			t.Fatalf("kept %d lines", len(p.last))
		}
		for _, l := range p.last {
			if l == "" || len(l) > maxStderrLine || strings.ContainsRune(l, '\n') {
				t.Fatalf("kept line %q", l)
			}
		}
	})
}
