package memory

import (
	"path"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseLinks never panics, and every link it finds is on a line of the
// text, with a target, outside any fence.
func FuzzParseLinks(f *testing.F) {
	for _, s := range []string{
		"see [a](b.md) and [[C|c]]\n```\n[x](y)\n```\n`[z](w)`",
		"[ref]: <a b.md>\n![img](p.png \"t\")",
		"[a](b(c)d) [[", "~~~\n[a](b)\n~~~~\n[c](d)", "``[a](b)`` `x", "\\[a](b)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.Count(text, "\n") + 1
		for _, l := range parseLinks(text) {
			if l.line < 1 || l.line > lines || l.target == "" {
				t.Fatalf("link %+v of a text of %d lines", l, lines)
			}
			r := resolveLink("files/a.md", l)
			if r.Resolved != "" && !strings.HasPrefix(r.Resolved, "files/") && !strings.HasPrefix(r.Resolved, "skills/") {
				t.Fatalf("%q resolved outside: %q", l.target, r.Resolved)
			}
			if strings.Contains(r.Resolved, "..") && !strings.Contains(l.target, "..") {
				t.Fatalf("%q resolved to %q", l.target, r.Resolved)
			}
		}
	})
}

// A copy's chunks are parts of it, in order, each starting at a
// message's heading or going on with the message before it (a long
// one), named by the message it starts in; no chunk's text, of a copy or
// a file, is past two pieces of a long line (2*chunkHard and a newline).
func FuzzChunkCopy(f *testing.F) {
	f.Add("## Owner · 2026-11-30 09:15 UTC · #1\n\nhello\n\n## Agent · 2026-11-30 09:15 UTC · #2\n\nhi\n\n<!-- seq 2 -->\n\n")
	f.Add("junk\n## x · #9\r\nbody")
	f.Add("## x · #1\n\n" + strings.Repeat("long words ", 1000) + "\n## y · #2\n\n" + strings.Repeat("é", 5000))
	f.Fuzz(func(t *testing.T, text string) {
		b := []byte(text)
		var end int64
		for _, c := range chunkCopy(b) {
			if c.Off < end || c.Off+int64(c.Len) > int64(len(b)) || c.Len < 0 {
				t.Fatalf("chunk at %d+%d of %d bytes, after %d", c.Off, c.Len, len(b), end)
			}
			var seq int64
			upto := len(text) // to the end of the line the chunk starts on
			if i := strings.IndexByte(text[c.Off:], '\n'); i >= 0 {
				upto = int(c.Off) + i
			}
			for _, l := range strings.Split(text[:upto], "\n") {
				if _, s, ok := parseHeading(strings.TrimSuffix(l, "\r")); ok {
					seq = s
				}
			}
			if seq == 0 || c.Seq != seq {
				t.Fatalf("chunk at %d is of #%d, its text after the heading of #%d: %q", c.Off, c.Seq, seq, text[c.Off:c.Off+int64(min(c.Len, 40))])
			}
			if len(c.Text) > 2*chunkHard+1 {
				t.Fatalf("chunk at %d holds %d bytes of text", c.Off, len(c.Text))
			}
			end = c.Off + int64(c.Len)
		}
		for _, c := range chunkFile(b) {
			if c.Off+int64(c.Len) > int64(len(b)) || len(c.Text) > 2*chunkHard+1 {
				t.Fatalf("file chunk at %d+%d of %d bytes, %d of text", c.Off, c.Len, len(b), len(c.Text))
			}
		}
	})
}

// Notes read and written again are the same notes, and a note checkNote
// lets through is one line.
func FuzzNotes(f *testing.F) {
	f.Add("- 2026-12-01: one\nby hand\n\n- 2026-13-99: odd\n", "a note")
	f.Fuzz(func(t *testing.T, file, note string) {
		notes := parseNotes([]byte(file))
		again := parseNotes(renderNotes(notes))
		if len(again) != len(notes) {
			t.Fatalf("%d notes, then %d", len(notes), len(again))
		}
		for i := range notes {
			if notes[i] != again[i] {
				t.Fatalf("note %q, then %q", notes[i], again[i])
			}
		}
		if checkNote(note) == nil {
			if strings.ContainsAny(note, "\n\r") || !utf8.ValidString(note) {
				t.Fatalf("note %q let through", note)
			}
			n := Note{Date: "2026-12-01", Text: strings.TrimSpace(note)}
			if got := parseNotes(renderNotes([]Note{n})); len(got) != 1 || got[0] != n {
				t.Fatalf("note %q read back as %q", n, got)
			}
		}
	})
}

// resolve lets through only names in what memory reads, with no "..".
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"files/a.md", "files/../x", "/etc/passwd", "chats/telegram:1", "memory/notes.md", "skills/x/SKILL.md", "files//a/./b", "", ".", "./", "/", "./files/"} {
		f.Add(s)
	}
	m := &Memory{}
	f.Fuzz(func(t *testing.T, name string) {
		p, err := m.resolve(name)
		if err != nil {
			return
		}
		if p.thread == "" && slices.Contains(strings.Split(p.name, "/"), "..") {
			t.Fatalf("%q resolved to %q", name, p.name)
		}
		if p.top {
			if path.Clean(name) != "." || strings.HasPrefix(name, "/") {
				t.Fatalf("%q resolved to the top level", name)
			}
			return
		}
		switch p.area {
		case AreaFiles, AreaSkills, AreaInstructions, AreaChats:
		case "memory":
			if p.name != NotesName {
				t.Fatalf("%q resolved to %q", name, p.name)
			}
		default:
			t.Fatalf("%q resolved to area %q", name, p.area)
		}
		if !strings.HasPrefix(p.name, p.area) {
			t.Fatalf("%q resolved to %q in %q", name, p.name, p.area)
		}
	})
}
