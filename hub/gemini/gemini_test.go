package gemini

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
)

// session is the session of testdata/session.jsonl, a chat file Gemini
// CLI 0.61.0 wrote through lnk-acp (its folders renamed).
const session = "8cb879c0-a9b4-403f-84c0-3f6f73d9480f"

// fresh is what Gemini CLI 0.61.0's session/load appends to a file of
// the session's name before it reads it: a fresh chat's metadata and its
// session context, which replace the messages before them.
const fresh = `{"sessionId":"` + session + `","projectHash":"30270a5b","startTime":"2026-12-01T22:45:59.100Z","lastUpdated":"2026-12-01T22:45:59.100Z","kind":"main"}
{"$set":{"messages":[{"id":"d04923d38bb0f6017037e74183378ef4","timestamp":"2026-12-01T22:45:59.100Z","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI.\n</session_context>"}]}],"lastUpdated":"2026-12-01T22:45:59.100Z"}}
`

func parseFile(t *testing.T, name string) Chat {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(context.Background(), bytes.NewReader(b), MaxFile)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestParse: Gemini's own file gives its session and what was said, its
// session context passed over; with a fresh chat appended (Gemini's
// load in the same minute), it gives nothing, as Gemini reads it.
func TestParse(t *testing.T) {
	c := parseFile(t, "testdata/session.jsonl")
	if c.SessionID != session || c.LastUpdated != "2026-12-01T22:45:57.713Z" || !c.Resumable {
		t.Errorf("session %q updated %q resumable %v", c.SessionID, c.LastUpdated, c.Resumable)
	}
	if len(c.Entries) != 2 || c.Entries[0].Role != contract.RoleUser || c.Entries[0].Text != "remember the word pelican" ||
		c.Entries[1].Role != contract.RoleAgent || !strings.HasSuffix(c.Entries[1].Text, "remember the word pelican") {
		t.Fatalf("entries %+v", c.Entries)
	}
	if c.Entries[0].Time == nil || !c.Entries[0].Time.Equal(time.Date(2026, 12, 1, 22, 45, 57, 277e6, time.UTC)) {
		t.Errorf("the user's time %v", c.Entries[0].Time)
	}
	b, _ := os.ReadFile("testdata/session.jsonl")
	spoiled, err := Parse(context.Background(), strings.NewReader(string(b)+fresh), MaxFile)
	if err != nil || len(spoiled.Entries) != 0 || spoiled.Resumable {
		t.Errorf("with a fresh chat appended: %+v, %v; want no entries, as Gemini reads it", spoiled.Entries, err)
	}
}

// TestParseRules: a message replaced by a later line of its id, a
// rewind, a $set of messages; a line that isn't an object refused by
// its number; more than max bytes refused.
func TestParseRules(t *testing.T) {
	head := `{"sessionId":"` + session + `","projectHash":"h"}` + "\n"
	for _, c := range []struct {
		name, body string
		want       []string // role: text
		err        string
	}{
		{"replaced", `{"id":"a","type":"user","content":[{"text":"one"}]}
{"id":"b","type":"gemini","content":"two","thoughts":[{"subject":"s"}]}
{"id":"b","type":"gemini","content":[{"text":"hm","thought":true},{"text":"two, again"}]}`, []string{"user: one", "agent: two, again"}, ""},
		{"rewound", `{"id":"a","type":"user","content":[{"text":"one"}]}
{"id":"b","type":"gemini","content":"two"}
{"id":"c","type":"user","content":"three"}
{"$rewindTo":"b"}
{"id":"d","type":"user","content":[{"text":"/memory show"}]}
{"id":"e","type":"info","content":"note"}`, []string{"user: one"}, ""},
		{"set", `{"id":"a","type":"user","content":[{"text":"one"}]}
{"$set":{"messages":[{"id":"x","type":"user","content":"again","displayContent":[{"text":"as shown"}]}],"lastUpdated":"L"}}`, []string{"user: as shown"}, ""},
		{"no metadata", `{"id":"a","type":"user","content":"one"}`, nil, ""},
		{"not an object", `{"id":"a","type":"user","content":"one"}` + "\n[1]", nil, "line 3: not a JSON object"},
		{"bad content", `{"id":"a","type":"user","content":7}`, nil, "line 2: a user message's content: neither text nor parts"},
	} {
		body := head + c.body
		if c.name == "no metadata" {
			body = c.body
		}
		got, err := Parse(context.Background(), strings.NewReader(body), MaxFile)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var texts []string
		for _, e := range got.Entries {
			texts = append(texts, e.Role+": "+e.Text)
		}
		if strings.Join(texts, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: %q, want %q", c.name, texts, c.want)
		}
	}
	if _, err := Parse(context.Background(), strings.NewReader(head+strings.Repeat(" ", 100)), 50); err == nil || !strings.Contains(err.Error(), "over the 50 bytes") {
		t.Errorf("over max: %v", err)
	}
}

// project makes Gemini's folder with the project of cwd registered as
// slug, as Gemini leaves it, and returns its chats folder.
func project(t *testing.T, dir, cwd, slug string) string {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, "tmp", slug, "chats"), 0o700)
	os.WriteFile(filepath.Join(dir, "tmp", slug, ".project_root"), []byte(cwd), 0o600)
	os.WriteFile(filepath.Join(dir, "projects.json"), []byte(`{"projects":{"`+cwd+`":"`+slug+`"}}`), 0o600)
	return filepath.Join(dir, "tmp", slug, "chats")
}

// TestPrepareStart: a kept session's file, named as Gemini names one,
// gets a name with seconds Gemini never makes, so the fresh chat
// Gemini's load records under the minute's name is never appended to
// it; a file of the session holding nothing said (the fresh chat a load
// left, which Gemini's cleanup would delete with every file of its
// ID8) is removed, when another file of the session holds what was
// said (a session whose files hold nothing said keeps them all); a
// session of one file has it renamed unread; files of sessions not kept
// and names with seconds already are left.
func TestPrepareStart(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	chats := project(t, dir, cwd, "work")
	b, _ := os.ReadFile("testdata/session.jsonl")
	own := filepath.Join(chats, "session-2026-12-01T22-45-8cb879c0.jsonl")
	stray := filepath.Join(chats, "session-2026-12-01T23-10-8cb879c0.jsonl")
	other := filepath.Join(chats, "session-2026-12-01T22-45-aaaaaaaa.jsonl")
	imported := filepath.Join(chats, "session-2026-12-01T22-40-12-1b5295c0.jsonl")
	lonely := filepath.Join(chats, "session-2026-12-01T22-41-bbbbbbbb.jsonl")
	os.WriteFile(own, b, 0o600)
	os.WriteFile(stray, []byte(fresh), 0o600)
	os.WriteFile(other, b, 0o600)
	os.WriteFile(imported, []byte(strings.ReplaceAll(string(b), session, "1b5295c0-6256-4d70-86cb-21736a3460eb")), 0o600)
	lonely2 := filepath.Join(chats, "session-2026-12-01T22-42-bbbbbbbb.jsonl")
	single := filepath.Join(chats, "session-2026-12-01T22-43-cccccccc.jsonl")
	for _, f := range []string{lonely, lonely2} {
		os.WriteFile(f, []byte(strings.ReplaceAll(fresh, session, "bbbbbbbb-6256-4d70-86cb-21736a3460eb")), 0o600)
	}
	os.WriteFile(single, []byte("not read"), 0o600)
	s := &Store{Dir: dir, Cwd: cwd}
	kept := []string{session, "1b5295c0-6256-4d70-86cb-21736a3460eb", "bbbbbbbb-6256-4d70-86cb-21736a3460eb", "cccccccc-6256-4d70-86cb-21736a3460eb", "../x"}
	if err := s.PrepareStart(context.Background(), kept); err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(chats, "session-2026-12-01T22-45-00-8cb879c0.jsonl")
	singleRenamed := filepath.Join(chats, "session-2026-12-01T22-43-00-cccccccc.jsonl")
	for f, want := range map[string]bool{own: false, renamed: true, stray: false, other: true, imported: true,
		lonely: true, lonely2: true, single: false, singleRenamed: true} {
		if _, err := os.Stat(f); (err == nil) != want {
			t.Errorf("%s there %v, want %v", filepath.Base(f), err == nil, want)
		}
	}
	// Gemini's load in the same minute now makes a file of its own.
	os.WriteFile(own, []byte(fresh), 0o600)
	got, ok, err := s.Export(context.Background(), session)
	if err != nil || !ok || len(got) != 2 || got[0].Text != "remember the word pelican" {
		t.Errorf("export after the fresh chat: %+v %v %v", got, ok, err)
	}
	if err := (&Store{Dir: t.TempDir(), Cwd: cwd}).PrepareStart(context.Background(), kept); err != nil {
		t.Errorf("with no project: %v", err)
	}
}

// TestImportExport: an import is a chat file Gemini reads as a session
// of the project (a project folder claimed when Gemini has none yet),
// under a name with seconds; export gives every text back, a sender's
// written into theirs.
func TestImportExport(t *testing.T) {
	dir, cwd := t.TempDir(), filepath.Join(t.TempDir(), "My Work")
	at := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	s := &Store{Dir: dir, Cwd: cwd, Now: func() time.Time { return at }}
	in := []contract.StateEntry{
		{Role: contract.RoleUser, Text: "the first question"},
		{Role: contract.RoleAgent, Text: "an answer,\nover two lines"},
		{Role: contract.RoleUser, Text: "hi", From: "telegram:7", FromName: "Ann"},
	}
	id, err := s.Import(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.ReadFile(filepath.Join(dir, "tmp", "my-work", ".project_root"))
	if err != nil || string(root) != cwd {
		t.Errorf("the project folder claimed: %q, %v", root, err)
	}
	name := filepath.Join(dir, "tmp", "my-work", "chats", "session-2026-12-01T22-00-00-"+id[:8]+".jsonl")
	c := parseFile(t, name)
	if c.SessionID != id {
		t.Errorf("the file's session %q, want %q", c.SessionID, id)
	}
	got, ok, err := s.Export(context.Background(), id)
	if err != nil || !ok || len(got) != 3 {
		t.Fatalf("export %+v %v %v", got, ok, err)
	}
	want := []string{"the first question", "an answer,\nover two lines", "Message from Ann (telegram:7):\n> hi"}
	for i, e := range got {
		if e.Role != in[i].Role || e.Text != want[i] {
			t.Errorf("entry %d: %+v, want %s %q", i, e, in[i].Role, want[i])
		}
	}
	// A second import goes in the same project folder.
	id2, err := s.Import(context.Background(), in[:1])
	if err != nil || id2 == id {
		t.Fatal(id2, err)
	}
	if names, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(names) != 1 {
		t.Errorf("tmp holds %d project folders", len(names))
	}
	if _, ok, err := s.Export(context.Background(), "00000000-0000-4000-8000-000000000000"); ok || err != nil {
		t.Errorf("an unknown session: %v %v", ok, err)
	}
	if _, ok, err := s.Export(context.Background(), "../../x"); ok || err != nil {
		t.Errorf("a session that is no UUID: %v %v", ok, err)
	}
}

// TestLinksRefused: a chats or tmp folder that is a symbolic link is
// refused, never followed.
func TestLinksRefused(t *testing.T) {
	dir, cwd, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	chats := project(t, dir, cwd, "work")
	os.Remove(chats)
	os.Symlink(elsewhere, chats)
	s := &Store{Dir: dir, Cwd: cwd}
	if _, err := s.Import(context.Background(), []contract.StateEntry{{Role: contract.RoleUser, Text: "x"}}); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("import into a linked chats folder: %v", err)
	}
	if _, _, err := s.Export(context.Background(), session); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("export from a linked chats folder: %v", err)
	}
	dir2 := t.TempDir()
	os.Symlink(elsewhere, filepath.Join(dir2, "tmp"))
	if err := (&Store{Dir: dir2, Cwd: cwd}).PrepareStart(context.Background(), []string{session}); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("a linked tmp folder: %v", err)
	}
}
