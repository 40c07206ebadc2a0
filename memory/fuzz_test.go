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

// A copy's chunks are whole lines of it, in order, each starting at a
// message's heading.
func FuzzChunkCopy(f *testing.F) {
	f.Add("## Owner · 2026-11-30 09:15 UTC · #1\n\nhello\n\n## Agent · 2026-11-30 09:15 UTC · #2\n\nhi\n\n<!-- seq 2 -->\n\n")
	f.Add("junk\n## x · #9\r\nbody")
	f.Fuzz(func(t *testing.T, text string) {
		b := []byte(text)
		var end int64
		for _, c := range chunkCopy(b) {
			if c.Off < end || c.Off+int64(c.Len) > int64(len(b)) || c.Len < 0 {
				t.Fatalf("chunk at %d+%d of %d bytes, after %d", c.Off, c.Len, len(b), end)
			}
			if _, _, ok := parseHeading(strings.TrimSuffix(strings.SplitN(text[c.Off:], "\n", 2)[0], "\r")); !ok {
				t.Fatalf("chunk at %d doesn't start with a heading: %q", c.Off, text[c.Off:c.Off+int64(min(c.Len, 40))])
			}
			end = c.Off + int64(c.Len)
		}
		for _, c := range chunkFile(b) {
			if c.Off+int64(c.Len) > int64(len(b)) {
				t.Fatalf("file chunk past the end")
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
