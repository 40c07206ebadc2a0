package claudecode

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

// TestParseClaudeFile: a session file claude-agent-acp 0.23.1 (Claude
// Code 2.1.83) wrote here, two turns against the fake provider, gives
// its two messages and two answers, the /model lines it wrote for the
// session's first turn passed over.
func TestParseClaudeFile(t *testing.T) {
	f, err := os.Open("testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := Parse(context.Background(), f, MaxFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d entries: %+v", len(got), got)
	}
	want := []struct{ role, text, time string }{
		{"user", "remember the word pelican", "2026-12-01T19:57:05.98Z"},
		{"agent", "[fake provider] You said: <system-reminder>", "2026-12-01T19:57:06.665Z"},
		{"user", "which word?", "2026-12-01T19:57:06.839Z"},
		{"agent", "[fake provider] You said: which word?", "2026-12-01T19:57:06.963Z"},
	}
	for i, w := range want {
		g := got[i]
		if g.Role != w.role || !strings.HasPrefix(g.Text, w.text) || g.Time == nil || !g.Time.Equal(*at(w.time)) {
			t.Errorf("entry %d is %s %q at %v, want %s %q... at %s", i, g.Role, g.Text, g.Time, w.role, w.text, w.time)
		}
	}
}

// TestWriteThenParse: entries written as a session file read back as
// they were; one from someone other than the owner has who written into
// its text, and lines of one time are a millisecond apart.
func TestWriteThenParse(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	in := []contract.StateEntry{
		{Role: "user", Text: "what's on today?\n<b>\"quoted\"</b>", Time: at("2026-12-01T08:00:00.123Z")},
		{Role: "agent", Text: "Two meetings."},
		{Role: "agent", Text: "And lunch."},
		{Role: "user", Text: "and Ann's?\nsecond line", From: "person:telegram:7", FromName: "Ann"},
	}
	b, err := Write(in, "0b9d2d3e-5f7c-4b8e-9b5e-2a1c3d4e5f60", "/work", now)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(context.Background(), bytes.NewReader(b), MaxFile)
	if err != nil {
		t.Fatal(err)
	}
	// Lines of one time are written a millisecond apart, in order.
	now1, now2 := now.Add(time.Millisecond), now.Add(2*time.Millisecond)
	want := []contract.StateEntry{
		{Role: "user", Text: in[0].Text, Time: in[0].Time},
		{Role: "agent", Text: "Two meetings.", Time: &now},
		{Role: "agent", Text: "And lunch.", Time: &now1},
		{Role: "user", Text: "Message from Ann (person:telegram:7):\n> and Ann's?\n> second line", Time: &now2},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].Role != want[i].Role || got[i].Text != want[i].Text || !got[i].Time.Equal(*want[i].Time) {
			t.Errorf("entry %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if !strings.Contains(string(b), `"parentUuid":null`) || strings.Count(string(b), "\n") != 4 {
		t.Errorf("the file is not four lines, the first with no parent:\n%s", b)
	}
}

// TestParseRefuses: a file that breaks a rule is refused, naming its
// line and the rule.
func TestParseRefuses(t *testing.T) {
	user := `{"type":"user","message":{"role":"user","content":"hi"}}` + "\n"
	for _, c := range []struct{ name, file, want string }{
		{"not JSON", user + "{oops\n", "line 2: not a JSON object"},
		{"an array", "[1]\n", "line 1: not a JSON object"},
		{"message not an object", `{"type":"user","message":"hi"}`, "line 1: a user line's message is not an object"},
		{"no message", `{"type":"assistant"}`, "line 1: a assistant line's message is not an object"},
		{"content a number", `{"type":"user","message":{"content":7}}`, "line 1: a user line's content: neither a string nor blocks"},
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

// TestParsePassesOver: what isn't a message or an answer said is passed
// over: tool results, tool calls, thinking, meta and sidechain lines,
// compaction summaries, interruptions, local commands, other types; the
// lines of one answer (one message id) are one entry.
func TestParsePassesOver(t *testing.T) {
	file := strings.Join([]string{
		`{"type":"summary","summary":"x"}`,
		`{"type":"user","isMeta":true,"message":{"role":"user","content":"meta"}}`,
		`{"type":"user","message":{"role":"user","content":"<command-name>/model</command-name>"}}`,
		`{"type":"user","uuid":"u1","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{}}]}}`,
		`{"type":"user","uuid":"u1","message":{"role":"user","content":"written twice"}}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"hmm"}]}}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"I'll look."}]}}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Read","input":{}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"file"}]}}`,
		`{"type":"assistant","isSidechain":true,"message":{"id":"s","role":"assistant","content":[{"type":"text","text":"subagent"}]}}`,
		`{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"It says hi."}]}}`,
		`{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"Bye."}]}}`,
		`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"summary"}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}`,
		``,
	}, "\n")
	got, err := Parse(context.Background(), strings.NewReader(file), MaxFile)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range got {
		s = append(s, e.Role+": "+e.Text)
	}
	want := []string{"user: look\n[image]", "agent: I'll look.", "agent: It says hi.\n\nBye."}
	if strings.Join(s, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", s, want)
	}
}

// TestStoreImportExport: an import writes a new session file in the
// folder Claude Code keeps cwd's sessions in, and an export reads it
// back; a session Claude Code doesn't keep, or an id that isn't one, is
// not given (ok false) and names no path.
func TestStoreImportExport(t *testing.T) {
	config, cwd := t.TempDir(), t.TempDir()
	s := &Store{ConfigDir: config, Cwd: cwd}
	ctx := context.Background()
	in := []contract.StateEntry{{Role: "user", Text: "hello"}, {Role: "agent", Text: "hi"}}
	id, err := s.Import(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(cwd)
	if _, err := os.Stat(filepath.Join(config, "projects", Slug(real), id+".jsonl")); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Export(ctx, id)
	if err != nil || !ok || len(got) != 2 || got[0].Text != "hello" || got[1].Text != "hi" {
		t.Fatalf("exported %+v, %v, %v", got, ok, err)
	}
	for _, id := range []string{"0b9d2d3e-5f7c-4b8e-9b5e-2a1c3d4e5f60", "../../etc/passwd", "", "0b9d2d3e/5f7c-4b8e-9b5e-2a1c3d4e5f6"} {
		if _, ok, err := s.Export(ctx, id); ok || err != nil {
			t.Errorf("export of %q: %v, %v", id, ok, err)
		}
	}
}

// TestStoreRefusesLinks: a link in Claude Code's folder (projects/, the
// cwd's folder, a session file) is never followed.
func TestStoreRefusesLinks(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "x.jsonl"), []byte(`{"type":"user","message":{"content":"secret"}}`), 0o600)

	config, cwd := t.TempDir(), t.TempDir()
	real, _ := filepath.EvalSymlinks(cwd)
	os.Symlink(outside, filepath.Join(config, "projects"))
	s := &Store{ConfigDir: config, Cwd: cwd}
	if _, err := s.Import(ctx, []contract.StateEntry{{Role: "user", Text: "x"}}); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("import through projects/ a link: %v", err)
	}

	config = t.TempDir()
	os.MkdirAll(filepath.Join(config, "projects"), 0o700)
	os.Symlink(outside, filepath.Join(config, "projects", Slug(real)))
	s = &Store{ConfigDir: config, Cwd: cwd}
	if _, _, err := s.Export(ctx, "0b9d2d3e-5f7c-4b8e-9b5e-2a1c3d4e5f60"); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("export through the cwd's folder a link: %v", err)
	}

	config = t.TempDir()
	dir := filepath.Join(config, "projects", Slug(real))
	os.MkdirAll(dir, 0o700)
	id := "0b9d2d3e-5f7c-4b8e-9b5e-2a1c3d4e5f60"
	os.Symlink(filepath.Join(outside, "x.jsonl"), filepath.Join(dir, id+".jsonl"))
	s = &Store{ConfigDir: config, Cwd: cwd}
	if got, _, err := s.Export(ctx, id); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("export of a session file that is a link: %+v, %v", got, err)
	}
}

// TestSlug: the folder names Claude Code gives (checked against its
// own function run in Node): short paths kept, each UTF-16 unit but
// a-z, A-Z, 0-9 a "-", long ones cut at 200 and hashed.
func TestSlug(t *testing.T) {
	long := "/home/someone/" + strings.Repeat("a-very-long-folder-name/", 9) + "é😀end"
	for _, c := range []struct{ in, want string }{
		{"/tmp/exp-claude/work", "-tmp-exp-claude-work"},
		{"/tmp/é😀x", "-tmp----x"},
		{long, "-home-someone-a-very-long-folder-name-a-very-long-folder-name-a-very-long-folder-name-a-very-long-folder-name-a-very-long-folder-name-a-very-long-folder-name-a-very-long-folder-name-a-very-long-folder-spt1tc"},
	} {
		if got := Slug(c.in); got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestConfigDir: $CLAUDE_CONFIG_DIR, else $HOME/.claude.
func TestConfigDir(t *testing.T) {
	if d, _ := ConfigDir(map[string]string{"CLAUDE_CONFIG_DIR": "/c", "HOME": "/h"}); d != filepath.Clean("/c") {
		t.Errorf("with CLAUDE_CONFIG_DIR: %s", d)
	}
	if d, _ := ConfigDir(map[string]string{"HOME": "/h"}); d != filepath.Join("/h", ".claude") {
		t.Errorf("with HOME alone: %s", d)
	}
}

// TestParseCompacted: a session Claude Code compacted (/compact, then a
// turn) gives every message and answer, those before the compaction
// included (they stay in its file); the summary, the /compact command
// and what it printed are passed over.
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
	want := []string{"user: remember the word pelican", "agent: [fake provider] You said: <system-reminder>",
		"user: which word?", "agent: [fake provider] You said: which word?",
		"user: after compact", "agent: [fake provider] You said: <system-reminder>"}
	if len(got) != len(want) {
		t.Fatalf("got %d entries: %+v", len(got), got)
	}
	for i, w := range want {
		if g := got[i].Role + ": " + got[i].Text; !strings.HasPrefix(g, w) {
			t.Errorf("entry %d is %.80q, want %q...", i, g, w)
		}
	}
}

// TestStoreRefusesBadFiles: a session file that breaks a rule, or is
// over MaxFile (a sparse file, nothing read of it), is refused by
// Export, naming the rule.
func TestStoreRefusesBadFiles(t *testing.T) {
	config, cwd := t.TempDir(), t.TempDir()
	real, _ := filepath.EvalSymlinks(cwd)
	dir := filepath.Join(config, "projects", Slug(real))
	os.MkdirAll(dir, 0o700)
	s := &Store{ConfigDir: config, Cwd: cwd}
	bad, big := "0b9d2d3e-5f7c-4b8e-9b5e-2a1c3d4e5f60", "1b9d2d3e-5f7c-4b8e-9b5e-2a1c3d4e5f60"
	os.WriteFile(filepath.Join(dir, bad+".jsonl"), []byte(`{"type":"user","message":{"content":"hi"}}`+"\nnot json\n"), 0o600)
	os.WriteFile(filepath.Join(dir, big+".jsonl"), nil, 0o600)
	if err := os.Truncate(filepath.Join(dir, big+".jsonl"), MaxFile+1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Export(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "line 2: not a JSON object") {
		t.Errorf("a malformed file: %v", err)
	}
	if _, _, err := s.Export(context.Background(), big); err == nil || !strings.Contains(err.Error(), "over the 268435456 read") {
		t.Errorf("a file over MaxFile: %v", err)
	}
}
