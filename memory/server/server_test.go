package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/memory/server"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/transcript"
)

// Through the go-sdk's client: the calls listed, the instructions at most
// 2 KB, and each call's answer.
func TestCalls(t *testing.T) {
	url, p := serve(t)
	s := connect(t, url)
	if n := len(server.Instructions); n > 2048 {
		t.Fatalf("instructions are %d bytes, past 2 KB", n)
	}
	if got := s.InitializeResult().Instructions; got != server.Instructions {
		t.Fatalf("initialize's instructions: %q", got)
	}
	list, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if want := []string{"forget", "links", "list", "read", "remember", "search"}; !slices.Equal(names, want) {
		t.Fatalf("calls %v, want %v", names, want)
	}

	if got := ok(t, s, "remember", map[string]any{"note": "Ana's favourite colour is teal"}); !strings.Contains(got, "Remembered") {
		t.Fatal(got)
	}
	if got, failed := call(t, s, "remember", map[string]any{"note": "line one\nline two"}); !failed || !strings.Contains(got, "Refused: a note is one line") {
		t.Fatalf("a note of two lines: %v %s", failed, got)
	}
	write(t, filepath.Join(p.Files(), "garden.md"), "# Garden\n\nThe teal pots hold basil.\nSee [plan](plan.md) and [[Ideas]].\n")
	write(t, filepath.Join(p.Files(), "ideas", "Ideas.md"), "Back to the [garden](../garden.md).\n`[not](a-link.md)`\n")
	got := ok(t, s, "search", map[string]any{"query": "teal"})
	for _, want := range []string{"Ranked by full text (BM25)", "memory/notes.md, line 1", "files/garden.md, lines 1-4", "The teal pots hold basil."} {
		if !strings.Contains(got, want) {
			t.Errorf("search answer lacks %q:\n%s", want, got)
		}
	}
	if got := ok(t, s, "read", map[string]any{"path": "files/garden.md", "from": 3, "lines": 1}); got != "files/garden.md, lines 3-3 of 4 (read on from line 4):\nThe teal pots hold basil." {
		t.Fatalf("read: %q", got)
	}
	write(t, filepath.Join(p.Root, "skills", "brew", "SKILL.md"), "---\nname: brew\ndescription: Brew tea the owner's way\n---\n\nHeat water to 80 C.\n")
	if got := ok(t, s, "list", map[string]any{"path": "skills"}); !strings.Contains(got, "skills/brew/ (skill: Brew tea the owner's way)") {
		t.Fatalf("list skills: %s", got)
	}
	if got := ok(t, s, "read", map[string]any{"path": "skills/brew/SKILL.md"}); !strings.Contains(got, "Heat water to 80 C.") {
		t.Fatalf("read a skill: %s", got)
	}
	got = ok(t, s, "links", map[string]any{"path": "files/garden.md"})
	for _, want := range []string{"line 4: plan.md -> files/plan.md (broken: no such file)", "line 4: Ideas -> files/ideas/Ideas.md\n", "Linked from 1:\nfiles/ideas/Ideas.md line 1: ../garden.md"} {
		if !strings.Contains(got, want) {
			t.Errorf("links lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "a-link") {
		t.Errorf("a link in a code span was taken: %s", got)
	}
}

// Every path is confined to what memory reads of the agent's home: ..,
// absolute names, links out and the home's other files are refused.
func TestConfined(t *testing.T) {
	url, p := serve(t)
	s := connect(t, url)
	outside := filepath.Join(t.TempDir(), "secret.md")
	write(t, outside, "secret")
	write(t, filepath.Join(p.Files(), "ok.md"), "fine\n")
	if err := os.Symlink(outside, filepath.Join(p.Files(), "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(p.Files(), "dir")); err != nil {
		t.Fatal(err)
	}
	write(t, p.KeyFile(), "the endpoint key")
	for _, path := range []string{"files/../endpoint.key", "../main2/files/a.md", outside, "files/link.md", "files/dir/secret.md", "endpoint.key", "config.json", "memory/index.sqlite", "files/a\x00b"} {
		for _, c := range []string{"read", "links", "list"} {
			got, failed := call(t, s, c, map[string]any{"path": path})
			if !failed || !strings.HasPrefix(got, "Refused: ") || strings.Contains(got, "secret\n") {
				t.Errorf("%s %q: %v %s", c, path, failed, got)
			}
		}
	}
	got := ok(t, s, "search", map[string]any{"query": "secret"})
	if !strings.Contains(got, "Nothing matches") {
		t.Errorf("search found what a link points at: %s", got)
	}
}

// A conversation is listed under chats and read as its copy, by its
// thread or its folder's name, a range of lines at a time.
func TestReadConversation(t *testing.T) {
	url, p := serve(t)
	s := connect(t, url)
	lg := log.Open(p.Chats())
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	evs := []store.Event{
		{Seq: 1, Time: at, Kind: store.KindMessage, Text: "first question"},
		{Seq: 2, Time: at, Kind: store.KindAnswer, Text: "first answer"},
	}
	for _, e := range evs {
		if err := lg.Append(t.Context(), "telegram:42", e); err != nil {
			t.Fatal(err)
		}
	}
	if err := transcript.Append(t.Context(), p, lg, "telegram:42", "", evs); err != nil {
		t.Fatal(err)
	}
	if got := ok(t, s, "list", map[string]any{"path": "chats"}); got != "chats holds:\nchats/telegram:42" {
		t.Fatalf("list chats: %q", got)
	}
	want := "chats/telegram:42, lines 1-3 of 10 (read on from line 4):\n## Owner · 2026-11-30 09:00 UTC · #1\n\nfirst question"
	for _, name := range []string{"chats/telegram:42", "chats/telegram-42"} {
		if got := ok(t, s, "read", map[string]any{"path": name, "lines": 3}); got != want {
			t.Fatalf("read %s: %q", name, got)
		}
	}
	if got, failed := call(t, s, "read", map[string]any{"path": "chats/telegram:9"}); !failed || !strings.Contains(got, "no conversation") {
		t.Fatalf("a conversation that isn't: %v %s", failed, got)
	}
}

// No answer names a path of the machine: a conversation's folder that
// is a symbolic link (the store's refusal names its folder) and a read
// of a missing file are told relative to the agent's home, in every call.
func TestNoMachinePath(t *testing.T) {
	url, p := serve(t)
	s := connect(t, url)
	elsewhere := t.TempDir()
	if err := os.MkdirAll(p.Chats(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(p.Chats(), "link-evil")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(p.Files(), "a.md"), "water the plants\n")
	home := filepath.Dir(filepath.Dir(p.Root))
	for _, c := range []struct {
		call string
		args map[string]any
	}{
		{"search", map[string]any{"query": "water"}},
		{"list", map[string]any{"path": "chats"}},
		{"list", map[string]any{}},
		{"read", map[string]any{"path": "chats/link-evil"}},
		{"read", map[string]any{"path": "files/none.md"}},
		{"links", map[string]any{"path": "files/none.md"}},
	} {
		got, _ := call(t, s, c.call, c.args)
		for _, path := range []string{home, elsewhere} {
			if strings.Contains(got, path) {
				t.Errorf("%s %v names %s:\n%s", c.call, c.args, path, got)
			}
		}
	}
}
