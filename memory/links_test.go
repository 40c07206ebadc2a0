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
		"",                    // 8: a definition starts no paragraph's line
		"[ref]: notes/ref.md", // 9
		"~~~",                 // 10
		"[[Fenced]]",          // 11
		"~~~",                 // 12
		"\\[escaped](no.md) ``a `[x](y.md)` b`` [[sub/Deep]]", // 13
		"",                        // 14
		"Its [plan][ref], again.", // 15
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
		`13 sub/Deep -> "files/sub/Deep.md" wiki "deep"`,
		`15 notes/ref.md -> "files/projects/notes/ref.md" wiki ""`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Whatever Markdown reads as code holds no link, as a CommonMark parser
// reads it: a code span running over a line end, a fence in a list item
// (indented) or in a block quote, an indented code block, HTML; and the
// same text outside code is a link.
func TestLinksNotInCode(t *testing.T) {
	text := strings.Join([]string{
		"A span `over [[Span]] a",           // 1
		"line end [s](span.md)` ends.",      // 2
		"",                                  // 3
		"- an item",                         // 4
		"",                                  // 5
		"  ```",                             // 6
		"  [[ListFence]] [l](list.md)",      // 7
		"  ```",                             // 8
		"",                                  // 9
		"> ```",                             // 10
		"> [[QuoteFence]] [q](quote.md)",    // 11
		"> ```",                             // 12
		"",                                  // 13
		"    [[Indented]] [i](indented.md)", // 14
		"",                                  // 15
		"<div>",                             // 16
		"[[Html]]",                          // 17
		"</div>",                            // 18
		"",                                  // 19
		"> [[Quoted]] and [ok](ok.md)",      // 20
		"- [[Item]]",                        // 21
	}, "\n")
	var got []string
	for _, r := range parseLinks(text) {
		got = append(got, fmt.Sprintf("%d %s %v", r.line, r.target, r.wiki))
	}
	want := []string{"20 ok.md false", "20 Quoted true", "21 Item true"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
