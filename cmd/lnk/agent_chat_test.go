package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/lnk-dev/link/cmd/internal/drivers/driverstest"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/log"
)

func chatRun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// chatHome is a Link home with agent main's conversation telegram:42 kept
// as a log: turns of a question, a tool call and its answer, and the
// answer.
func chatHome(t *testing.T) (string, store.Paths, []store.Event) {
	t.Helper()
	home := t.TempDir()
	p, err := store.For(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	d := log.Open(p.Chats())
	var es []store.Event
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i := 1; i <= 3; i++ {
		for _, e := range []store.Event{
			{Kind: store.KindMessage, Text: fmt.Sprintf("question %d", i)},
			{Kind: store.KindAnswer, Calls: []store.ToolCall{{ID: "c", Name: "memory__search", Input: "{}"}}},
			{Kind: store.KindToolResult, CallID: "c", Text: "the tool said so"},
			{Kind: store.KindAnswer, Text: fmt.Sprintf("answer %d", i)},
		} {
			e.Seq = int64(len(es) + 1)
			e.Time = t0.Add(time.Duration(e.Seq) * time.Minute)
			if err := d.Append(context.Background(), "telegram:42", e); err != nil {
				t.Fatal(err)
			}
			es = append(es, e)
		}
	}
	f := &folder.Files{Paths: p}
	if _, err := f.NarrowTools(context.Background(), "telegram:42", &[]string{"memory__search"}); err != nil {
		t.Fatal(err)
	}
	return home, p, es
}

func TestChatShowConvert(t *testing.T) {
	home, _, _ := chatHome(t)
	code, want, errOut := chatRun("agent", "chat", "show", "telegram:42", "--home", home)
	if code != 0 {
		t.Fatalf("show: %d %s", code, errOut)
	}
	for _, s := range []string{"question 1", "answer 3", "## Owner · 2026-11-30 09:01 UTC · #1"} {
		if !strings.Contains(want, s) {
			t.Fatalf("show lacks %q:\n%s", s, want)
		}
	}
	if strings.Contains(want, "the tool said so") {
		t.Fatalf("show prints a tool's answer:\n%s", want)
	}
	driverstest.Build(t, driverstest.Plugin("sqlite"))
	for _, to := range []string{"compact", "sqlite", "log"} {
		code, out, errOut := chatRun("agent", "chat", "convert", "--home", home, "--to", to)
		if code != 0 || !strings.Contains(out, "1 conversations of main converted to "+to) {
			t.Fatalf("convert to %s: %d %q %q", to, code, out, errOut)
		}
		if !strings.Contains(errOut, "\r[") || !strings.Contains(errOut, "] 1/1") {
			t.Fatalf("convert to %s drew no progress: %q", to, errOut)
		}
		// The same copy, read from the events the new way.
		if code, got, errOut := chatRun("agent", "chat", "show", "--home", home, "telegram:42"); code != 0 || got != want {
			t.Fatalf("show after convert to %s: %d %s\n%s\nwant\n%s", to, code, errOut, got, want)
		}
	}
}

// A conversation whose folder is a symbolic link is named as refused by
// convert, by its thread and its folder in the agent's home, never
// followed: the link and the conversation it points to are left as they
// are, and no path outside the home is told.
func TestChatConvertLink(t *testing.T) {
	home, p, _ := chatHome(t)
	elsewhere := t.TempDir()
	if err := log.Open(elsewhere).Append(context.Background(), "telegram:9", store.Event{Seq: 1, Kind: store.KindMessage, Text: "theirs"}); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(elsewhere, "telegram-9")
	link, _ := p.Conversation("telegram:9")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(target, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := chatRun("agent", "chat", "convert", "--home", home, "--to", "compact")
	if code != 0 || !strings.Contains(out, "1 conversations of main converted to compact; 1 refused: a symbolic link") {
		t.Fatalf("convert: %d %q %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "telegram:9 not converted: its conversation folder (chats/telegram-9) is a symbolic link, refused: never followed") {
		t.Errorf("convert names no link refused: %q", errOut)
	}
	if strings.Contains(out+errOut, elsewhere) || strings.Contains(out+errOut, home) {
		t.Errorf("convert tells a machine path: %q %q", out, errOut)
	}
	if got, err := os.Readlink(link); err != nil || got != target {
		t.Errorf("the link is %q, %v; want it as it was", got, err)
	}
	if after, err := os.ReadFile(filepath.Join(target, "events.jsonl")); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the conversation linked to is %q, %v; want %q", after, err, before)
	}
	if es, err := os.ReadDir(target); err != nil || len(es) != 1 {
		t.Errorf("the folder linked to holds %v, %v; want its events alone", es, err)
	}
}

func TestChatFork(t *testing.T) {
	home, p, es := chatHome(t)
	t.Setenv("LNK_HOME", home)
	t.Setenv("LNK_AGENT", "main")
	code, out, errOut := chatRun("agent", "chat", "fork", "telegram:42", "--before", "5", "--as", "link:edit")
	if code != 0 || out != "link:edit\n" {
		t.Fatalf("fork: %d %q %q", code, out, errOut)
	}
	got, err := log.Open(p.Chats()).Read(context.Background(), "link:edit", 1)
	if err != nil || len(got) != 4 || got[3].Text != es[3].Text || !got[3].Time.Equal(es[3].Time) {
		t.Fatalf("fork's events: %+v, %v", got, err)
	}
	tools, err := (&folder.Files{Paths: p}).ReadTools(context.Background(), "link:edit")
	if err != nil || tools == nil || len(*tools) != 1 {
		t.Fatalf("fork's tools: %v, %v", tools, err)
	}
	// Without --as, a name of its own, another each time.
	code, out, _ = chatRun("agent", "chat", "fork", "telegram:42", "--before", "9")
	if code != 0 || out != "link:fork-9-telegram-42\n" {
		t.Fatalf("fork without --as: %d %q", code, out)
	}
	code, out, _ = chatRun("agent", "chat", "fork", "telegram:42", "--before", "9")
	if code != 0 || out != "link:fork-9-telegram-42-2\n" {
		t.Fatalf("fork again without --as: %d %q", code, out)
	}
	// Before an answer, or a thread with no conversation: refused.
	if code, _, errOut := chatRun("agent", "chat", "fork", "telegram:42", "--before", "4"); code != 1 || !strings.Contains(errOut, "not a message from the owner") {
		t.Fatalf("fork before an answer: %d %q", code, errOut)
	}
	if code, _, errOut := chatRun("agent", "chat", "fork", "telegram:43", "--before", "1"); code != 1 || !strings.Contains(errOut, "no conversation") {
		t.Fatalf("fork of nothing: %d %q", code, errOut)
	}
}

func TestChatUsage(t *testing.T) {
	home, _, _ := chatHome(t)
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"agent", "chat", "show", "--help"}, 0, "usage: lnk agent chat show"},
		{[]string{"agent", "chat", "convert", "--help"}, 0, "--to"},
		{[]string{"agent", "chat", "fork", "-h"}, 0, "--before"},
		{[]string{"agent", "chat", "show"}, 2, "usage"},
		{[]string{"agent", "chat", "convert", "--home", home}, 2, "usage"},
		{[]string{"agent", "chat", "fork", "telegram:42"}, 2, "usage"},
		{[]string{"agent", "chat", "show", "--nope"}, 2, "not defined"},
		{[]string{"agent", "chat", "convert", "--home", home, "--to", "paper"}, 1, `no way "paper"`},
		{[]string{"agent", "chat", "show", "--home", home, "nope:1"}, 1, "unknown connection"},
		{[]string{"agent", "chat", "show", "--home", home, "--agent", "Bad/Name", "telegram:42"}, 1, "agent"},
		{[]string{"agent", "chat", "show", "--home", home, "telegram:1"}, 1, "no conversation"},
	} {
		code, out, errOut := chatRun(c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.says) {
			t.Errorf("%v: %d %q %q; want %d and %q", c.args, code, out, errOut, c.code, c.says)
		}
	}
}

func TestChatConvertGCS(t *testing.T) {
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "chats"})
	driverstest.Build(t, driverstest.Plugin("gcs"))
	home, _, _ := chatHome(t)
	gcsFlags := []string{"--home", home, "--gcs-bucket", "chats", "--gcs-endpoint", srv.URL() + "/storage/v1/"}
	_, want, _ := chatRun("agent", "chat", "show", "--home", home, "telegram:42")

	code, out, errOut := chatRun(append([]string{"agent", "chat", "convert", "--to", "gcs"}, gcsFlags...)...)
	if code != 0 || !strings.Contains(out, "converted to gcs") {
		t.Fatalf("convert to gcs: %d %q %q", code, out, errOut)
	}
	if code, got, errOut := chatRun(append([]string{"agent", "chat", "show", "telegram:42"}, gcsFlags...)...); code != 0 || got != want {
		t.Fatalf("show from gcs: %d %q\n%s", code, errOut, got)
	}
	// Without the bucket, a conversation kept there says what it needs.
	if code, _, errOut := chatRun("agent", "chat", "show", "--home", home, "telegram:42"); code != 1 || !strings.Contains(errOut, "--gcs-bucket") {
		t.Fatalf("show without the bucket: %d %q", code, errOut)
	}
	code, out, errOut = chatRun(append([]string{"agent", "chat", "convert", "--to", "log"}, gcsFlags...)...)
	if code != 0 || !strings.Contains(out, "converted to log") {
		t.Fatalf("convert back: %d %q %q", code, out, errOut)
	}
	if code, got, _ := chatRun("agent", "chat", "show", "--home", home, "telegram:42"); code != 0 || got != want {
		t.Fatalf("show after convert back: %d\n%s", code, got)
	}
}
