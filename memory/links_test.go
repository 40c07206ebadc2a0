package memory

import (
	"fmt"
	"strings"
	"testing"
)

// Links are found outside code spans and fenced blocks, each with its
// line, and resolved against the file's folder.
func TestParseLinks(t *testing.T) {
	text := strings.Join([]string{
		"# Plan", // 1
		"See [the list](todo.md#top) and ![a cat](img/cat.png \"Cat\").", // 2
		"`[not a link](code.md)` but [[Ideas|my ideas]] is.",             // 3
		"```go",                                // 4
		"x := \"[no](fenced.md)\" // [[Nope]]", // 5
		"```",                                  // 6
		"[web](https://example.com) [up](../../outside.md) [sub](sub/page%20one.md)", // 7
		"[ref]: notes/ref.md", // 8
		"~~~",                 // 9
		"[[Fenced]]",          // 10
		"~~~",                 // 11
		"\\[escaped](no.md) ``a `[x](y.md)` b`` [[sub/Deep]]", // 12
	}, "\n")
	var got []string
	for _, r := range parseLinks(text) {
		l := resolveLink("files/projects/plan.md", r)
		got = append(got, fmt.Sprintf("%d %s -> %q wiki %q", l.Line, l.Target, l.Resolved, l.Wiki))
	}
	want := []string{
		`2 todo.md#top -> "files/projects/todo.md" wiki ""`,
		`2 img/cat.png -> "files/projects/img/cat.png" wiki ""`,
		`3 Ideas -> "" wiki "ideas"`,
		`7 https://example.com -> "" wiki ""`,
		`7 ../../outside.md -> "" wiki ""`,
		`7 sub/page%20one.md -> "files/projects/sub/page one.md" wiki ""`,
		`8 notes/ref.md -> "files/projects/notes/ref.md" wiki ""`,
		`12 sub/Deep -> "files/sub/Deep.md" wiki "deep"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
