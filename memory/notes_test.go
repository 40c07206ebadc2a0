package memory_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/memory"
)

func notesFile(tb testing.TB, m *memory.Memory) string {
	tb.Helper()
	ns, err := m.ReadNotes()
	if err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	for _, n := range ns {
		b.WriteString(n.Date + " " + n.Text + "\n")
	}
	return b.String()
}

// Remember adds a dated line; a duplicate, an empty note, a line break
// or a control character is refused, naming the rule, and nothing
// changes; forget and replaces remove by text, a part naming one alone.
func TestRememberAndForget(t *testing.T) {
	ctx := context.Background()
	m, p := newMemory(t, t.TempDir())
	for _, n := range []string{"Owner's name is Ana", "Ana likes green tea", "Ana's bike is blue"} {
		if _, err := m.Remember(ctx, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(p.Notes())
	if err != nil {
		t.Fatal(err)
	}
	want := "- 2026-12-01: Owner's name is Ana\n- 2026-12-01: Ana likes green tea\n- 2026-12-01: Ana's bike is blue\n"
	if string(b) != want {
		t.Fatalf("notes.md:\n%s\nwant:\n%s", b, want)
	}
	for _, c := range []struct{ note, rule string }{
		{"Ana likes green tea", "already there"},
		{"  ", "empty"},
		{"two\nlines", "line break"},
		{"carriage\rreturn", "line break"},
		{"a bell \a here", "control character"},
		{"a tab\there", "control character"},
		{"a next line\u0085here", "control character"},
		{"a separator\u2028here", "line break"},
	} {
		_, err := m.Remember(ctx, c.note, nil)
		if !errors.Is(err, memory.ErrRefused) || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("remember %q: %v, want a refusal saying %q", c.note, err, c.rule)
		}
	}
	if after, _ := os.ReadFile(p.Notes()); string(after) != want {
		t.Fatalf("refusals changed the notes:\n%s", after)
	}
	if _, err := m.Forget(ctx, []string{"Ana"}); !errors.Is(err, memory.ErrRefused) || !strings.Contains(err.Error(), "more than one note") {
		t.Fatalf("forget a part in several notes: %v", err)
	}
	if _, err := m.Forget(ctx, []string{"no such"}); !errors.Is(err, memory.ErrRefused) {
		t.Fatalf("forget what isn't there: %v", err)
	}
	if _, err := m.Forget(ctx, []string{"green tea"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Remember(ctx, "Ana's bike is red, since November", []string{"Ana's bike is blue"}); err != nil {
		t.Fatal(err)
	}
	got := notesFile(t, m)
	if want := "2026-12-01 Owner's name is Ana\n2026-12-01 Ana's bike is red, since November\n"; got != want {
		t.Fatalf("notes:\n%s\nwant:\n%s", got, want)
	}
}

// The cap is exactly MaxNotes bytes of UTF-8: a note that brings the
// file to 4,096 is kept, one byte more is refused, and the refusal says
// the sizes and lists every note, so one call can consolidate them.
func TestNotesCap(t *testing.T) {
	ctx := context.Background()
	m, p := newMemory(t, t.TempDir())
	const line = len("- 2026-12-01: ") + 1 // the mark, the date and the newline
	// 31 notes of 120 bytes each (é is two bytes), then one to fill it.
	note := strings.Repeat("é", 40) + strings.Repeat("x", 120-line-80)
	for i := range 31 {
		if _, err := m.Remember(ctx, note+string(rune('A'+i)), nil); err != nil {
			t.Fatal(i, err)
		}
	}
	b, _ := os.ReadFile(p.Notes())
	room := memory.MaxNotes - len(b) - line
	if _, err := m.Remember(ctx, strings.Repeat("y", room+1), nil); !errors.Is(err, memory.ErrRefused) {
		t.Fatalf("a note one byte past the cap: %v", err)
	} else {
		msg := err.Error()
		for _, want := range []string{"4,097 bytes", "cap of 4,096", "31 notes", "replaces", note + "A", note + "_"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the refusal doesn't say %q:\n%s", want, msg)
			}
		}
	}
	ch, err := m.Remember(ctx, strings.Repeat("y", room), nil)
	if err != nil {
		t.Fatalf("a note filling the cap exactly: %v", err)
	}
	if b, _ := os.ReadFile(p.Notes()); len(b) != memory.MaxNotes || ch.Size != memory.MaxNotes {
		t.Fatalf("notes are %d bytes (said %d), want %d", len(b), ch.Size, memory.MaxNotes)
	}
	// Full: a replacement that makes room is taken in one call.
	if _, err := m.Remember(ctx, "all the é notes: merged", []string{note + "A", note + "B"}); err != nil {
		t.Fatal(err)
	}
}

// The notes are never written through a link: a notes.md, or a memory
// folder, that is a link is refused, and what it points at is left as
// it was.
func TestNotesNotThroughALink(t *testing.T) {
	ctx := context.Background()
	for _, link := range []string{"memory/notes.md", "memory"} {
		m, p := newMemory(t, t.TempDir())
		outside := filepath.Join(t.TempDir(), "elsewhere")
		write(t, filepath.Join(outside, "notes.md"), "theirs\n")
		at := filepath.Join(p.Root, filepath.FromSlash(link))
		os.RemoveAll(at)
		target := outside
		if link == "memory/notes.md" {
			target = filepath.Join(outside, "notes.md")
		}
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Remember(ctx, "a note", nil); !errors.Is(err, memory.ErrOutside) {
			t.Errorf("%s a link: %v", link, err)
		}
		if b, _ := os.ReadFile(filepath.Join(outside, "notes.md")); string(b) != "theirs\n" {
			t.Errorf("%s a link: what it points at is now %q", link, b)
		}
	}
}

// Notes already past the cap (written by hand, or under a cap since
// lowered) can still be made smaller: forget, or remember in the place of
// longer notes, is taken, since the refusal's own advice is to forget or
// merge notes; only a change that grows them past the cap is refused.
func TestNotesPastCapShrink(t *testing.T) {
	ctx := context.Background()
	m, p := newMemory(t, t.TempDir())
	var b strings.Builder
	for i := range 50 {
		b.WriteString("- 2026-11-01: a note written by hand, number " + strings.Repeat("n", 60) + string(rune('A'+i)) + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(p.Notes()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Notes(), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if b.Len() <= memory.MaxNotes {
		t.Fatalf("the notes are %d bytes, not past the cap", b.Len())
	}
	ch, err := m.Forget(ctx, []string{strings.Repeat("n", 60) + "A"})
	if err != nil {
		t.Fatalf("forget a note of notes past the cap: %v", err)
	}
	if ch.Size >= b.Len() || len(ch.Notes) != 49 {
		t.Fatalf("forget left %d notes, %d bytes", len(ch.Notes), ch.Size)
	}
	if _, err := m.Remember(ctx, "merged: two hand notes", []string{strings.Repeat("n", 60) + "B", strings.Repeat("n", 60) + "C"}); err != nil {
		t.Fatalf("remember in the place of two longer notes past the cap: %v", err)
	}
	if _, err := m.Remember(ctx, "one more", nil); !errors.Is(err, memory.ErrRefused) {
		t.Fatalf("a note that grows notes past the cap: %v, want a refusal", err)
	}
}

// A hand-written file's blank lines aren't room: a note that grows the
// notes themselves past the cap is refused though the file, its blank
// lines dropped, would be shorter than it was.
func TestNotesPastCapBlankLines(t *testing.T) {
	ctx := context.Background()
	m, p := newMemory(t, t.TempDir())
	var b strings.Builder
	for i := range 40 {
		b.WriteString("- 2026-11-01: a note written by hand, number " + strings.Repeat("n", 60) + string(rune('A'+i)) + "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n")
	}
	write(t, p.Notes(), b.String())
	if _, err := m.Remember(ctx, "one more", nil); !errors.Is(err, memory.ErrRefused) {
		t.Fatalf("a note that grows notes past the cap, beside blank lines: %v, want a refusal", err)
	}
}

// A notes file written by hand far past any notes (over 1 MiB) is not
// read whole at a remember or a forget: the change is refused, naming
// the bound and what to do, and the file is left as it was.
func TestNotesFileBounded(t *testing.T) {
	ctx := context.Background()
	m, p := newMemory(t, t.TempDir())
	huge := strings.Repeat("- 2026-11-01: a note written by hand "+strings.Repeat("n", 60)+"\n", (2<<20)/100)
	write(t, p.Notes(), huge)
	_, err := m.Remember(ctx, "one more", nil)
	if !errors.Is(err, memory.ErrRefused) || !strings.Contains(err.Error(), "over 1,048,576 bytes") || len(err.Error()) > 1000 {
		t.Fatalf("remember beside a %d-byte notes file: %.300v (%d bytes), want a short refusal naming the bound", len(huge), err, len(fmt.Sprint(err)))
	}
	if _, err := m.Forget(ctx, []string{strings.Repeat("n", 60)}); !errors.Is(err, memory.ErrRefused) {
		t.Fatalf("forget beside a %d-byte notes file: %.300v", len(huge), err)
	}
	if b, _ := os.ReadFile(p.Notes()); string(b) != huge {
		t.Fatal("the notes file changed")
	}
}

// A note holds no format character that hides or reorders what the
// prompt shows (U+202E turns the rest of the line around, U+200B is
// unseen), as fromName holds none; the joiners that emoji and Persian or
// Indic writing need (U+200D, U+200C) are kept.
func TestNoteFormatCharacters(t *testing.T) {
	ctx := context.Background()
	m, p := newMemory(t, t.TempDir())
	for _, n := range []string{"pay \u202eeno\u202c bill", "zero\u200bwidth", "word\u2060joiner", "\ufeffbom first", "isolate \u2066x\u2069"} {
		_, err := m.Remember(ctx, n, nil)
		if !errors.Is(err, memory.ErrRefused) || !strings.Contains(err.Error(), "format character") {
			t.Errorf("remember %q: %v, want a refusal naming the format character", n, err)
		}
	}
	if _, err := os.Stat(p.Notes()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("refused notes wrote the file: %v", err)
	}
	for _, n := range []string{"family \U0001F468\u200d\U0001F469\u200d\U0001F467", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"} {
		if _, err := m.Remember(ctx, n, nil); err != nil {
			t.Errorf("remember %q: %v", n, err)
		}
	}
}
