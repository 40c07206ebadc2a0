package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// MaxNotes bounds memory/notes.md, in bytes of UTF-8, every note's date,
// mark and newline included: the notes are in every prompt.
const MaxNotes = 4096

// maxNotesFile bounds what is read of the notes' file, which its owner
// may have written past MaxNotes by hand: as much as of any file.
const maxNotesFile = maxFile

// ErrRefused: a call broke one of memory's rules; nothing was changed.
// The error's text says which rule, and what to do instead.
var ErrRefused = errors.New("refused")

// Note is one line of memory/notes.md: "- 2026-12-01: the text". A line
// written by hand in another form is a note whose Date is "" and whose
// Text is the whole line.
type Note struct {
	Date string
	Text string
}

// line is the note as the file holds it, without its newline.
func (n Note) line() string {
	if n.Date == "" {
		return n.Text
	}
	return "- " + n.Date + ": " + n.Text
}

// parseNotes reads the notes of a file, a line a note; blank lines are
// none.
func parseNotes(b []byte) []Note {
	var out []Note
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(l, "- "); ok && len(rest) > 12 && rest[10] == ':' && rest[11] == ' ' && isDate(rest[:10]) {
			out = append(out, Note{Date: rest[:10], Text: rest[12:]})
			continue
		}
		out = append(out, Note{Text: l})
	}
	return out
}

func isDate(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 4 || i == 7 {
			if c != '-' {
				return false
			}
		} else if c < '0' || c > '9' {
			return false
		}
	}
	return len(s) == 10
}

// renderNotes is the file holding notes.
func renderNotes(notes []Note) []byte {
	var b strings.Builder
	for _, n := range notes {
		b.WriteString(n.line())
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// The joiners a note may hold among the format characters: emoji
// sequences and Persian and Indic writing need them.
const (
	zwnj = '\u200c'
	zwj  = '\u200d'
)

// checkNote refuses a note memory won't keep: empty, or holding a
// newline or any other control character (a line a note, and the file
// goes into every prompt as it is), or a format character but the
// joiners (U+202E, U+200B...: what fromName may not hold either).
func checkNote(text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("a note is some text; this one is empty: %w", ErrRefused)
	case !utf8.ValidString(text):
		return fmt.Errorf("a note is UTF-8 text; this one isn't: %w", ErrRefused)
	}
	for i, r := range text {
		if r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029 {
			return fmt.Errorf("a note is one line; this one has a line break at byte %d (write two notes, or join the lines): %w", i, ErrRefused)
		}
		if unicode.IsControl(r) {
			return fmt.Errorf("a note holds no control character; this one has U+%04X at byte %d: %w", r, i, ErrRefused)
		}
		if unicode.Is(unicode.Cf, r) && r != zwnj && r != zwj {
			return fmt.Errorf("a note holds no format character (unseen, or turning the text around in the prompt); this one has U+%04X at byte %d: %w", r, i, ErrRefused)
		}
	}
	return nil
}

// NotesChange is what Remember or Forget did: the notes as they now
// are, and the file's size.
type NotesChange struct {
	Notes []Note
	Size  int
}

// Remember adds a note, dated today, to memory/notes.md, taking the place
// of the notes replaces names (each by its text, or a part of it that
// names one note alone), in one write. It is refused, changing nothing,
// for a note that isn't one line of text, one already there word for
// word, a replaced note not found, or notes past MaxNotes in all: that
// refusal lists every note and the size, so the model can consolidate
// them in one call.
func (m *Memory) Remember(ctx context.Context, text string, replaces []string) (NotesChange, error) {
	text = strings.TrimSpace(text)
	if err := checkNote(text); err != nil {
		return NotesChange{}, err
	}
	return m.changeNotes(ctx, func(notes []Note) ([]Note, error) {
		kept, err := without(notes, replaces)
		if err != nil {
			return nil, err
		}
		for _, n := range kept {
			if n.Text == text {
				return nil, fmt.Errorf("that note is already there, word for word (of %s): %w", n.Date, ErrRefused)
			}
		}
		return append(kept, Note{Date: m.now().Format("2006-01-02"), Text: text}), nil
	})
}

// Forget removes the notes named (each by its text, or a part of it that
// names one note alone) from memory/notes.md, in one write.
func (m *Memory) Forget(ctx context.Context, names []string) (NotesChange, error) {
	if len(names) == 0 {
		return NotesChange{}, fmt.Errorf("forget names the notes to remove, by their text: %w", ErrRefused)
	}
	return m.changeNotes(ctx, func(notes []Note) ([]Note, error) { return without(notes, names) })
}

// without is notes less those names name. A name is a note's text (or
// its whole line), else a part of one note's text alone.
func without(notes []Note, names []string) ([]Note, error) {
	drop := map[int]bool{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		i, err := findNote(notes, name)
		if err != nil {
			return nil, err
		}
		drop[i] = true
	}
	var out []Note
	for i, n := range notes {
		if !drop[i] {
			out = append(out, n)
		}
	}
	return out, nil
}

func findNote(notes []Note, name string) (int, error) {
	if name == "" {
		return 0, fmt.Errorf("an empty name names no note: %w", ErrRefused)
	}
	for i, n := range notes {
		if n.Text == name || n.line() == name {
			return i, nil
		}
	}
	found := -1
	for i, n := range notes {
		if strings.Contains(n.Text, name) {
			if found >= 0 {
				return 0, fmt.Errorf("%q is in more than one note (%q and %q); name one by more of its text: %w", clip(name, 200), clip(notes[found].Text, 200), clip(n.Text, 200), ErrRefused)
			}
			found = i
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("no note has %q; the notes are in every prompt, or read memory/notes.md: %w", clip(name, 200), ErrRefused)
	}
	return found, nil
}

// changeNotes changes the notes under the memory folder's lock: it reads
// the file, lets change make the new notes, refuses them past MaxNotes,
// and writes the file whole beside it, synced, then renames it in
// place. Once it returns without an error the notes are on the disk. A
// change that leaves them past MaxNotes is refused unless it shrinks them.
func (m *Memory) changeNotes(ctx context.Context, change func([]Note) ([]Note, error)) (NotesChange, error) {
	path := m.paths.Notes()
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return NotesChange{}, fmt.Errorf("notes: %w", err)
	}
	// Never written through a link, on the way or as the file.
	if fi, err := m.files.Stat(ctx, m.paths.Agent, NotesName); err == nil && fi.Symlink || errors.Is(err, store.ErrSymlink) {
		return NotesChange{}, fmt.Errorf("notes: %s is reached through a link, and memory writes through none: %w", NotesName, ErrOutside)
	}
	unlock, err := fsx.LockDir(ctx, dir)
	if err != nil {
		return NotesChange{}, fmt.Errorf("notes: %w", err)
	}
	defer unlock()
	old, err := fsx.ReadLimit(path, maxNotesFile)
	if errors.Is(err, fsx.ErrTooBig) {
		return NotesChange{}, fmt.Errorf("%s is over %s bytes, far past the notes' cap (written by hand?): nothing was changed; the owner must shorten it by hand: %w", NotesName, comma(maxNotesFile), ErrRefused)
	}
	if err != nil {
		return NotesChange{}, fmt.Errorf("notes: %w", err)
	}
	notes := parseNotes(old)
	next, err := change(notes)
	if err != nil {
		return NotesChange{}, err
	}
	b := renderNotes(next)
	// Notes already past the cap (written by hand) may still shrink: the
	// refusal's own advice is to forget or merge notes.
	if len(b) > MaxNotes && len(b) > len(renderNotes(notes)) {
		return NotesChange{}, fmt.Errorf("%s: %w", overCap(notes, len(old), len(b)), ErrRefused)
	}
	if err := fsx.Replace(path, b, true); err != nil {
		return NotesChange{}, fmt.Errorf("notes: %w", err)
	}
	m.notesChanged(ctx)
	return NotesChange{Notes: next, Size: len(b)}, nil
}

// overCap is the refusal of notes past MaxNotes: the sizes, what to do,
// and every note as it is.
func overCap(notes []Note, now, would int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the notes would be %s bytes, past their cap of %s (they are %s bytes in %d notes now). "+
		"Nothing was changed. Make room first, in one call: remember with replaces naming the notes the new one takes the place of "+
		"(merge several into one), or forget the notes no longer needed. The notes now:\n", comma(would), comma(MaxNotes), comma(now), len(notes))
	for _, n := range notes {
		b.WriteString(n.line())
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// comma writes n with thousands separated: 4,096.
func comma(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ReadNotes reads the notes as they are now.
func (m *Memory) ReadNotes() ([]Note, error) {
	b, err := fsx.ReadLimit(m.paths.Notes(), maxNotesFile)
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	return parseNotes(b), nil
}
