package codex

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

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return &t
}

// TestParseCodexFile: a rollout codex-acp 0.16.0 (Codex 0.137.0) wrote
// here, two turns against the fake provider, gives its two messages and
// two answers, its instructions and environment passed over.
func TestParseCodexFile(t *testing.T) {
	f, err := os.Open("testdata/rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := Parse(context.Background(), f, MaxFile)
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.StateEntry{
		{Role: "user", Text: "remember the word pelican", Time: at("2026-12-01T20:13:01.319Z")},
		{Role: "agent", Text: "[fake provider] You said: remember the word pelican", Time: at("2026-12-01T20:13:01.906Z")},
		{Role: "user", Text: "which word?", Time: at("2026-12-01T20:13:01.969Z")},
		{Role: "agent", Text: "[fake provider] You said: which word?", Time: at("2026-12-01T20:13:02.478Z")},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].Role != want[i].Role || got[i].Text != want[i].Text || !got[i].Time.Equal(*want[i].Time) {
			t.Errorf("entry %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestWriteThenParse: entries written as a rollout read back as they
// were; one from someone other than the owner has who written into its
// text; the model is given each as a response item.
func TestWriteThenParse(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	in := []contract.StateEntry{
		{Role: "user", Text: "what's on today?\n<b>\"quoted\"</b>", Time: at("2026-12-01T08:00:00.123Z")},
		{Role: "agent", Text: "Two meetings."},
		{Role: "user", Text: "and Ann's?", From: "person:telegram:7", FromName: "Ann"},
	}
	b, err := Write(in, "01a2333d-3db6-7b60-833e-8381f777dcca", "/work", now)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(context.Background(), bytes.NewReader(b), MaxFile)
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.StateEntry{
		{Role: "user", Text: in[0].Text, Time: in[0].Time},
		{Role: "agent", Text: "Two meetings.", Time: &now},
		{Role: "user", Text: "Message from Ann (person:telegram:7):\n> and Ann's?", Time: &now},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].Role != want[i].Role || got[i].Text != want[i].Text || !got[i].Time.Equal(*want[i].Time) {
			t.Errorf("entry %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 7 || !strings.Contains(lines[0], `"type":"session_meta"`) || !strings.Contains(lines[0], `"id":"01a2333d-3db6-7b60-833e-8381f777dcca"`) ||
		!strings.Contains(lines[3], `"type":"response_item"`) || !strings.Contains(lines[3], `"output_text"`) {
		t.Errorf("the rollout is not its meta and a response item and event each entry:\n%s", b)
	}
}

// TestParseRefuses: a rollout that breaks a rule is refused, naming its
// line and the rule.
func TestParseRefuses(t *testing.T) {
	user := `{"type":"event_msg","payload":{"type":"user_message","message":"hi"}}` + "\n"
	for _, c := range []struct{ name, file, want string }{
		{"not JSON", user + "{oops\n", "line 2: not a JSON object"},
		{"an array", "[1]\n", "line 1: not a JSON object"},
		{"payload not an object", `{"type":"event_msg","payload":"x"}`, "line 1: an event_msg's payload is not an object"},
		{"no message", `{"type":"event_msg","payload":{"type":"agent_message"}}`, "line 1: a agent_message event's message is not a string"},
		{"message a number", `{"type":"event_msg","payload":{"type":"user_message","message":7}}`, "line 1: an event_msg's payload is not an object"},
		{"over its bytes", strings.Repeat(user, 100), "the file is over the 1000 bytes read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(context.Background(), strings.NewReader(c.file), 1000)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Parse(ctx, strings.NewReader(strings.Repeat(user, 300)), MaxFile); !errors.Is(err, context.Canceled) {
		t.Errorf("a read whose time is up: %v", err)
	}
}

// TestStoreImportExport: an import writes a new rollout under the day's
// folder, and an export finds and reads it back; a session Codex doesn't
// keep, or an id that isn't one, is not given (ok false).
func TestStoreImportExport(t *testing.T) {
	home := t.TempDir()
	now := time.Date(2026, 12, 1, 9, 30, 5, 0, time.UTC)
	s := &Store{Home: home, Cwd: "/work", Now: func() time.Time { return now }}
	ctx := context.Background()
	id, err := s.Import(ctx, []contract.StateEntry{{Role: "user", Text: "hello"}, {Role: "agent", Text: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(home, "sessions", "2026", "12", "01", "rollout-2026-12-01T09-30-05-"+id+".jsonl")
	if _, err := os.Stat(name); err != nil {
		t.Fatal(err)
	}
	if id[14] != '7' {
		t.Errorf("the session %s is no version 7 UUID", id)
	}
	got, ok, err := s.Export(ctx, id)
	if err != nil || !ok || len(got) != 2 || got[0].Text != "hello" || got[1].Text != "hi" {
		t.Fatalf("exported %+v, %v, %v", got, ok, err)
	}
	for _, id := range []string{"01a2333d-3db6-7b60-833e-8381f777dcca", "../../etc/passwd", ""} {
		if _, ok, err := s.Export(ctx, id); ok || err != nil {
			t.Errorf("export of %q: %v, %v", id, ok, err)
		}
	}
	if _, ok, err := (&Store{Home: t.TempDir(), Cwd: "/w"}).Export(ctx, id); ok || err != nil {
		t.Errorf("export with no sessions folder: %v, %v", ok, err)
	}
}

// TestStoreRefusesLinks: a link in Codex's folder (sessions/, a day's
// folder, a rollout) is never followed.
func TestStoreRefusesLinks(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 30, 5, 0, time.UTC)
	outside := t.TempDir()
	id := "01a2333d-3db6-7b60-833e-8381f777dcca"
	os.WriteFile(filepath.Join(outside, "rollout-x-"+id+".jsonl"), []byte(`{"type":"event_msg","payload":{"type":"user_message","message":"secret"}}`), 0o600)

	home := t.TempDir()
	os.Symlink(outside, filepath.Join(home, "sessions"))
	s := &Store{Home: home, Cwd: "/w", Now: func() time.Time { return now }}
	if _, err := s.Import(ctx, []contract.StateEntry{{Role: "user", Text: "x"}}); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("import through sessions/ a link: %v", err)
	}
	if _, _, err := s.Export(ctx, id); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("export through sessions/ a link: %v", err)
	}

	home = t.TempDir()
	os.MkdirAll(filepath.Join(home, "sessions", "2026"), 0o700)
	os.Symlink(outside, filepath.Join(home, "sessions", "2026", "12"))
	s = &Store{Home: home, Cwd: "/w", Now: func() time.Time { return now }}
	if _, err := s.Import(ctx, []contract.StateEntry{{Role: "user", Text: "x"}}); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("import through a month's folder a link: %v", err)
	}
	if _, ok, err := s.Export(ctx, id); ok || err != nil {
		t.Errorf("export through a month's folder a link: %v, %v", ok, err)
	}

	home = t.TempDir()
	day := filepath.Join(home, "sessions", "2026", "12", "01")
	os.MkdirAll(day, 0o700)
	os.Symlink(filepath.Join(outside, "rollout-x-"+id+".jsonl"), filepath.Join(day, "rollout-2026-12-01T09-30-05-"+id+".jsonl"))
	s = &Store{Home: home, Cwd: "/w"}
	if got, ok, err := s.Export(ctx, id); ok || err != nil {
		t.Errorf("export of a rollout that is a link: %+v, %v, %v", got, ok, err)
	}
}

// TestHome: $CODEX_HOME, else $HOME/.codex.
func TestHome(t *testing.T) {
	if d, _ := Home(map[string]string{"CODEX_HOME": "/c", "HOME": "/h"}); d != filepath.Clean("/c") {
		t.Errorf("with CODEX_HOME: %s", d)
	}
	if d, _ := Home(map[string]string{"HOME": "/h"}); d != filepath.Join("/h", ".codex") {
		t.Errorf("with HOME alone: %s", d)
	}
}

// TestParseCompacted: a rollout Codex compacted (/compact, then a turn)
// gives every message and answer, those before the compaction included;
// the summary the model wrote is passed over.
func TestParseCompacted(t *testing.T) {
	f, err := os.Open("testdata/compacted.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := Parse(context.Background(), f, MaxFile)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range got {
		s = append(s, e.Role+": "+e.Text)
	}
	want := []string{"user: remember the word pelican", "agent: [fake provider] You said: remember the word pelican",
		"user: which word?", "agent: [fake provider] You said: which word?",
		"user: after compact", "agent: [fake provider] You said: after compact"}
	if strings.Join(s, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", s, want)
	}
}

// TestStoreRefusesBadFiles: a rollout that breaks a rule, or is over
// MaxFile (a sparse file, nothing read of it), is refused by Export,
// naming the rule.
func TestStoreRefusesBadFiles(t *testing.T) {
	home := t.TempDir()
	day := filepath.Join(home, "sessions", "2026", "12", "01")
	os.MkdirAll(day, 0o700)
	s := &Store{Home: home, Cwd: "/w"}
	bad, big := "01a2333d-3db6-7b60-833e-8381f777dcca", "11a2333d-3db6-7b60-833e-8381f777dcca"
	os.WriteFile(filepath.Join(day, "rollout-2026-12-01T09-30-05-"+bad+".jsonl"), []byte(`{"type":"session_meta","payload":{}}`+"\n[]\n"), 0o600)
	name := filepath.Join(day, "rollout-2026-12-01T09-30-05-"+big+".jsonl")
	os.WriteFile(name, nil, 0o600)
	if err := os.Truncate(name, MaxFile+1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Export(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "line 2: not a JSON object") {
		t.Errorf("a malformed rollout: %v", err)
	}
	if _, _, err := s.Export(context.Background(), big); err == nil || !strings.Contains(err.Error(), "over the 268435456 read") {
		t.Errorf("a rollout over MaxFile: %v", err)
	}
}
