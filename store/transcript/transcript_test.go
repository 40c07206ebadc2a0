package transcript_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/internal/fixture"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/transcript"
)

func TestRender(t *testing.T) {
	es := fixture.Conversation(4, "a")
	// A message from a person in a shared chat, and the owner's message
	// being answered after the last answer.
	es = append(es,
		store.Event{Seq: int64(len(es) + 1), Time: fixture.T0, Kind: store.KindMessage, From: "person:telegram:7", FromName: "Ada\nLovelace", Text: "hello from Ada",
			Parts: []store.Part{{Type: "image", MimeType: "image/png", Data: "iVBO"}}},
		store.Event{Seq: int64(len(es) + 2), Time: fixture.T0, Kind: store.KindAnswer, Text: "hi Ada"},
		store.Event{Seq: int64(len(es) + 3), Time: fixture.T0, Kind: store.KindMessage, Text: "the question being answered"},
		store.Event{Seq: int64(len(es) + 4), Time: fixture.T0, Kind: store.KindAnswer, Text: "half way", Calls: []store.ToolCall{{ID: "c", Name: "run__command"}}},
	)
	got := string(transcript.Render(es))
	for _, want := range []string{"question 1 of a", "answer 4 of a", "## Owner · 2026-11-30 09:15 UTC", "## Agent ·",
		"## Ada Lovelace (person:telegram:7)", "hello from Ada", "_(image: image/png)_", "hi Ada"} {
		if !strings.Contains(got, want) {
			t.Errorf("copy lacks %q", want)
		}
	}
	for _, never := range []string{"tool said", "looking", "memory__search", "summary to", "scheduled", "the question being answered", "half way", "hmm", "sig"} {
		if strings.Contains(got, never) {
			t.Errorf("copy holds %q:\n%s", never, got)
		}
	}
	if !strings.HasSuffix(got, "hi Ada\n\n<!-- seq 20 -->\n\n") {
		t.Fatalf("copy doesn't end with its last answer's trailer:\n%s", got[max(0, len(got)-200):])
	}
	if len(transcript.Render(es[:1])) != 0 {
		t.Fatal("a copy before any answer holds something")
	}
}

// The copy grows at each answer from what the turn holds, and is the same
// as one made from every event.
func TestAppend(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	r := fixture.Router(t, p, log.Name)
	th := "telegram:42"
	es := fixture.Conversation(9, "a")
	path, _ := p.ConversationFile(th, transcript.File)
	turnStart := 0
	for i, e := range es {
		fixture.AppendAll(t, r, th, []store.Event{e})
		if store.FinalAnswer(e) {
			// The turn holds its own events and a window of a few before.
			turn := es[max(0, turnStart-3) : i+1]
			if err := transcript.Append(ctx, p, r, th, "", turn); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if want := transcript.Render(es[:i+1]); string(b) != string(want) {
				t.Fatalf("after #%d the copy is\n%s\nwant\n%s", e.Seq, b, want)
			}
			// Added once: the same turn again adds nothing.
			transcript.Append(ctx, p, r, th, "", turn)
			if b2, _ := os.ReadFile(path); string(b2) != string(b) {
				t.Fatal("the same answer added twice")
			}
			turnStart = i + 1
		}
	}
}

// A copy that doesn't end with the last answer is made again from every
// event; one the turn can't extend reads what it lacks.
func TestAppendRemade(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	r := fixture.Router(t, p, log.Name)
	th := "telegram:42"
	es := fixture.Conversation(6, "a")
	fixture.AppendAll(t, r, th, es)
	path, _ := p.ConversationFile(th, transcript.File)
	want := string(transcript.Render(es))
	last := es[len(es)-2:] // the last turn's final answer and its summary's neighbours

	for _, c := range []struct {
		name string
		copy string
	}{
		{"cut short", want[:len(want)/2]},
		{"cut in its trailer", want[:len(want)-5]},
		{"another's, ahead", want + "## Agent · x\n\nlater\n\n<!-- seq 999 -->\n\n"},
		{"ends with what isn't an answer", strings.Replace(want, "<!-- seq 26 -->", "<!-- seq 25 -->", 1)},
		{"an older copy", string(transcript.Render(es[:8]))},
		{"the last but one answer", string(transcript.Render(es[:22]))},
		{"none", ""},
		{"empty", ""},
		{"not a copy", "hello\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "none" {
				os.Remove(path)
			} else if err := os.WriteFile(path, []byte(c.copy), 0o600); err != nil {
				t.Fatal(err)
			}
			turn := last
			if c.name == "ends with what isn't an answer" {
				turn = es[20:]
			}
			if err := transcript.Append(ctx, p, r, th, "", turn); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if string(b) != want {
				t.Fatalf("copy is\n%s\nwant\n%s", b, want)
			}
		})
	}
}

// An empty copy, as a folder made ahead holds (store/log's MakeAhead),
// is no copy yet: the first answer adds to it in place, not by making it
// again beside and renaming it over.
func TestAppendToEmpty(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	r := fixture.Router(t, p, log.Name)
	th := "telegram:42"
	es := fixture.Conversation(2, "a")
	fixture.AppendAll(t, r, th, es)
	path, _ := p.ConversationFile(th, transcript.File)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if seq, ok, err := transcript.End(path); seq != 0 || !ok || err != nil {
		t.Fatalf("an empty copy ends with %d, %v, %v: want none yet", seq, ok, err)
	}
	if err := transcript.Append(ctx, p, r, th, "", es); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := transcript.Render(es); string(b) != string(want) {
		t.Fatalf("copy is\n%s\nwant\n%s", b, want)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Fatal("the empty copy was replaced, not added to")
	}
}

func TestNoCopyBesideCompact(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	r := fixture.Router(t, p, compact.Name)
	es := fixture.Conversation(2, "a")
	fixture.AppendAll(t, r, "telegram:1", es)
	if err := transcript.Append(ctx, p, r, "telegram:1", "", es); err != nil {
		t.Fatal(err)
	}
	if err := transcript.Make(ctx, p, r, "telegram:1"); err != nil {
		t.Fatal(err)
	}
	dir, _ := p.Conversation("telegram:1")
	if _, err := os.Stat(filepath.Join(dir, transcript.File)); !os.IsNotExist(err) {
		t.Fatalf("a copy beside a compact conversation: %v", err)
	}
}

// A message that joined a running turn (written while the model answered,
// before that answer, which didn't see it) is still being answered after
// that answer: the copy, which memory searches, ends before both until an
// answer that saw it comes, so a search in the round answering it doesn't
// find the question itself.
func TestRenderJoinedStillAnswered(t *testing.T) {
	at := fixture.T0
	es := []store.Event{
		{Seq: 1, Time: at, Kind: store.KindMessage, Text: "first question"},
		{Seq: 2, Time: at, Kind: store.KindAnswer, Text: "first answer", Seen: 1},
		{Seq: 3, Time: at, Kind: store.KindMessage, Text: "second question"},
		{Seq: 4, Time: at, Kind: store.KindMessage, Text: "joined while answered", Steered: true},
		{Seq: 5, Time: at, Kind: store.KindAnswer, Text: "second answer", Seen: 3},
	}
	got := string(transcript.Render(es))
	for _, never := range []string{"joined while answered", "second question", "second answer"} {
		if strings.Contains(got, never) {
			t.Errorf("the copy holds %q while a message before its answer is still answered:\n%s", never, got)
		}
	}
	if !strings.HasSuffix(got, "first answer\n\n<!-- seq 2 -->\n\n") {
		t.Fatalf("the copy doesn't end with the last answer that answered all before it:\n%s", got)
	}
	// Answered: everything is in it.
	es = append(es, store.Event{Seq: 6, Time: at, Kind: store.KindAnswer, Text: "answer to the joined", Seen: 5})
	got = string(transcript.Render(es))
	for _, want := range []string{"second question", "joined while answered", "second answer", "answer to the joined"} {
		if !strings.Contains(got, want) {
			t.Errorf("the copy lacks %q once answered:\n%s", want, got)
		}
	}
	// A message from a schedule (not in the copy) joining doesn't hold the
	// copy back.
	es = append(es,
		store.Event{Seq: 7, Time: at, Kind: store.KindMessage, Text: "third"},
		store.Event{Seq: 8, Time: at, Kind: store.KindMessage, From: "schedule:daily", Text: "tick", Steered: true},
		store.Event{Seq: 9, Time: at, Kind: store.KindAnswer, Text: "third answer", Seen: 7},
	)
	if got := string(transcript.Render(es)); !strings.HasSuffix(got, "<!-- seq 9 -->\n\n") {
		t.Fatalf("a schedule's joined message held the copy back:\n%s", got)
	}
}

// Append, from a turn's events, ends the copy as Render does: not past a
// message still being answered.
func TestAppendJoinedStillAnswered(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	r := fixture.Router(t, p, log.Name)
	at := fixture.T0
	es := []store.Event{
		{Seq: 1, Time: at, Kind: store.KindMessage, Text: "question"},
		{Seq: 2, Time: at, Kind: store.KindMessage, Text: "joined while answered", Steered: true},
		{Seq: 3, Time: at, Kind: store.KindAnswer, Text: "answer", Seen: 1},
	}
	fixture.AppendAll(t, r, "telegram:42", es)
	if err := transcript.Append(ctx, p, r, "telegram:42", log.Name, es); err != nil {
		t.Fatal(err)
	}
	dir, _ := p.Conversation("telegram:42")
	b, err := os.ReadFile(filepath.Join(dir, transcript.File))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "joined while answered") {
		t.Fatalf("the copy holds a message still being answered:\n%s", b)
	}
	more := store.Event{Seq: 4, Time: at, Kind: store.KindAnswer, Text: "the joined answered", Seen: 3}
	fixture.AppendAll(t, r, "telegram:42", []store.Event{more})
	if err := transcript.Append(ctx, p, r, "telegram:42", log.Name, append(es, more)); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(dir, transcript.File))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.Contains(got, "joined while answered") || !strings.HasSuffix(got, "<!-- seq 4 -->\n\n") || strings.Count(got, "## Owner") != 2 {
		t.Fatalf("the copy once answered:\n%s", got)
	}
}
