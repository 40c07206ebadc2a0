package harness_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/transcript"
)

// copyOf reads thread's copy for people.
func (r *rig) copyOf(thread string) ([]byte, error) {
	r.T.Helper()
	p, _ := store.For(r.Home, testAgent)
	dir, err := p.Conversation(thread)
	if err != nil {
		r.T.Fatal(err)
	}
	return os.ReadFile(filepath.Join(dir, transcript.File))
}

// Each answer adds what was said since the last one to the copy for
// people: the owner's messages and the agent's answers, never a tool's
// call or its answer, the same as lnk agent chat show renders from the
// events.
func TestCopyAddedEachAnswer(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:61"
	r.Model.Push(
		model.Response{Text: "looking it up", Calls: []model.ToolCall{{ID: "c1", Name: "memory__search", Input: `{"query":"dentist"}`}}},
		model.Response{Text: "The dentist is at 09:30."},
	)
	if _, _, err := r.Say(thread, "When is the dentist?", nil); err != nil {
		t.Fatal(err)
	}
	first, err := r.copyOf(thread)
	if err != nil {
		t.Fatalf("no copy after the first answer: %v", err)
	}
	if !bytes.Contains(first, []byte("When is the dentist?")) || !bytes.Contains(first, []byte("The dentist is at 09:30.")) {
		t.Fatalf("copy after one answer:\n%s", first)
	}
	r.Model.Push(model.Response{Text: "Noted: bring the card."})
	if _, _, err := r.Say(thread, "Remind me to bring the card.", nil); err != nil {
		t.Fatal(err)
	}
	got, err := r.copyOf(thread)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(got, first) {
		t.Fatalf("the copy wasn't added to:\nbefore:\n%s\nafter:\n%s", first, got)
	}
	for _, want := range []string{"When is the dentist?", "The dentist is at 09:30.", "Remind me to bring the card.", "Noted: bring the card."} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("the copy lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"looking it up", "memory__search", "dentist\"}", "found"} {
		if bytes.Contains(got, []byte(not)) {
			t.Errorf("the copy holds a tool's call or answer (%q):\n%s", not, got)
		}
	}
	if n := strings.Count(string(got), "## Owner"); n != 2 {
		t.Errorf("%d owner's messages in the copy, want 2", n)
	}
	if n := strings.Count(string(got), "## Agent"); n != 2 {
		t.Errorf("%d answers in the copy, want 2", n)
	}
	// lnk agent chat show renders the copy from the events.
	ev := r.Events(thread)
	if count(ev, isKind(store.KindToolResult)) != 1 {
		t.Fatalf("events %+v: want the tool's answer kept", ev)
	}
	if show := transcript.Render(ev); !bytes.Equal(got, show) {
		t.Fatalf("the copy:\n%s\nlnk agent chat show:\n%s", got, show)
	}
}

// A compact conversation has no copy for people.
func TestNoCopyBesideCompact(t *testing.T) {
	r := newRig(t)
	r.SetSettings(func(s *harness.Settings) { s.Conversations = compact.Name })
	const thread = "telegram:62"
	r.Model.Push(model.Response{Text: "one"}, model.Response{Text: "two"})
	for _, text := range []string{"first", "second"} {
		if _, _, err := r.Say(thread, text, nil); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := store.For(r.Home, testAgent)
	dir, _ := p.Conversation(thread)
	if kind, err := driver.Of(dir); err != nil || kind != compact.Name {
		t.Fatalf("kept as %q (%v), want compact", kind, err)
	}
	if ev := r.Events(thread); count(ev, store.FinalAnswer) != 2 {
		t.Fatalf("events %+v", ev)
	}
	if _, err := r.copyOf(thread); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a copy beside a compact conversation: %v", err)
	}
}

// A turn a crash left unfinished, finished by the sweep, adds its answer
// to the copy too.
func TestCopyAfterSweep(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:63"
	crashed(t, r.Home, thread, store.Event{Kind: store.KindMessage, Header: "[Mon 30 Nov 2026 10:16 UTC, telegram]", Text: "never answered"})
	r.Model.Push(model.Response{Text: "finished after the crash"})
	if err := r.Harness.Sweep(t.Context(), testAgent); err != nil {
		t.Fatal(err)
	}
	// Sweep returns once the turn it finished has ended: nothing else
	// adds to the copy.
	got, _ := r.copyOf(thread)
	if !bytes.Equal(got, transcript.Render(r.Events(thread))) || !bytes.Contains(got, []byte("never answered")) {
		t.Fatalf("the copy:\n%s", got)
	}
}
