package memory

import (
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	gmtext "github.com/yuin/goldmark/text"
)

// rawLink is a link as a Markdown text writes it: its line, its target,
// and whether it is a wiki link ([[Name]]).
type rawLink struct {
	line   int
	target string
	wiki   bool
}

// parseLinks finds the links of a Markdown text as a CommonMark parser
// reads it (goldmark): inline and reference links and images, each at
// the line its text starts on; and wiki links ([[Name]], [[Name|shown]],
// one line each), which CommonMark leaves as text, wherever the parse
// found no code: never in a code span (one running over a line end
// too), a fenced or indented code block (in a list item or a block
// quote too), or HTML. A reference definition alone ([ref]: target) is
// no link: the links that use it are.
func parseLinks(text string) []rawLink {
	src := []byte(text)
	doc := goldmark.DefaultParser().Parse(gmtext.NewReader(src))
	lines := lineStarts(src)
	var out []rawLink
	var code [][2]int // the byte ranges the parse read as code or HTML
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				code = append(code, [2]int{seg.Start, seg.Stop})
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan:
			if start, stop, ok := textSpan(n); ok {
				code = append(code, [2]int{start, stop})
			}
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML:
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				code = append(code, [2]int{seg.Start, seg.Stop})
			}
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			if t := string(n.Destination); t != "" {
				out = append(out, rawLink{line: lineOf(lines, linkStart(n)), target: t})
			}
		case *ast.Image:
			if t := string(n.Destination); t != "" {
				out = append(out, rawLink{line: lineOf(lines, linkStart(n)), target: t})
			}
		}
		return ast.WalkContinue, nil
	})
	out = append(out, wikiLinks(text, lines, code)...)
	slices.SortStableFunc(out, func(a, b rawLink) int { return a.line - b.line })
	return out
}

// wikiLinks finds the [[Name]] of text outside the ranges code holds,
// not escaped, each on one line.
func wikiLinks(text string, lines []int, code [][2]int) []rawLink {
	var out []rawLink
	for i := 0; ; {
		at := strings.Index(text[i:], "[[")
		if at < 0 {
			return out
		}
		at += i
		i = at + 2
		if at > 0 && text[at-1] == '\\' || inRanges(code, at) {
			continue
		}
		end := strings.Index(text[at+2:], "]]")
		if end < 0 {
			return out
		}
		inner := text[at+2 : at+2+end]
		if strings.ContainsAny(inner, "\n[") {
			continue // a wiki link is one line, and names no bracket
		}
		name, _, _ := strings.Cut(inner, "|")
		name, _, _ = strings.Cut(name, "#")
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, rawLink{line: lineOf(lines, at), target: name, wiki: true})
		}
		i = at + 2 + end + 2
	}
}

// textSpan is the bytes of the source n's text children cover, from the
// first's start to the last's stop.
func textSpan(n ast.Node) (start, stop int, ok bool) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, is := c.(*ast.Text); is {
			if !ok {
				start, ok = t.Segment.Start, true
			}
			stop = t.Segment.Stop
		}
	}
	return start, stop, ok
}

// linkStart is where a link's text starts in the source: its first text
// found, else the start of the block it is in.
func linkStart(n ast.Node) int {
	at := -1
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, is := c.(*ast.Text); is && entering {
			at = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	if at >= 0 {
		return at
	}
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			return p.Lines().At(0).Start
		}
	}
	return 0
}

// lineStarts is where each line of src starts.
func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, b := range src {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOf is the line (from 1) the byte at off is on.
func lineOf(starts []int, off int) int {
	i, found := slices.BinarySearch(starts, off)
	if found {
		return i + 1
	}
	return i
}

// inRanges says whether off is within one of ranges.
func inRanges(ranges [][2]int, off int) bool {
	for _, r := range ranges {
		if off >= r[0] && off < r[1] {
			return true
		}
	}
	return false
}

// resolveLink resolves a link of the source named from: a relative path
// against its folder (a note's against files/), a wiki link by name
// later (Link.Wiki). A link to the web or elsewhere resolves to "", as
// does one that leaves what memory reads.
func resolveLink(from string, r rawLink) Link {
	l := Link{Line: r.line, Target: r.target}
	if r.wiki {
		l.Wiki = wikiKey(r.target)
		if strings.Contains(r.target, "/") || strings.HasSuffix(strings.ToLower(r.target), ".md") {
			l.Resolved = inArea(path.Join(AreaFiles, withMD(r.target)))
		}
		return l
	}
	t := r.target
	if u, err := url.Parse(t); err != nil || u.Scheme != "" || u.Host != "" {
		return l
	}
	t, _, _ = strings.Cut(t, "#")
	t, _, _ = strings.Cut(t, "?")
	if un, err := url.PathUnescape(t); err == nil {
		t = un
	}
	if t == "" {
		return l
	}
	dir := path.Dir(from)
	if from == NotesName || strings.HasPrefix(t, "/") {
		dir = AreaFiles
	}
	l.Resolved = inArea(path.Join(dir, t))
	return l
}

// inArea is p when it is in files/ or skills/, else "".
func inArea(p string) string {
	if strings.HasPrefix(p, AreaFiles+"/") || strings.HasPrefix(p, AreaSkills+"/") {
		return p
	}
	return ""
}

func withMD(s string) string {
	if strings.Contains(path.Base(s), ".") {
		return s
	}
	return s + ".md"
}

// nearestWiki is the file a wiki link by name alone ([[Name]]) in the
// source from names, of the files so named: the one whose folder is
// nearest from's: the one sharing the most folders of from's path (its
// own folder's first, then those below it, then its parent's), and of
// those, the one in the fewest folders, then the shortest name, then the
// first in order (a note's links are from files/). So a link names one
// file, and a file elsewhere of the same name doesn't take its
// backlinks. "" when names is empty.
func nearestWiki(from string, names []string) string {
	dir := path.Dir(from)
	if from == NotesName {
		dir = AreaFiles
	}
	best, bestShared := "", -1
	for _, n := range names {
		shared := sharedFolders(dir, path.Dir(n))
		if shared != bestShared {
			if shared > bestShared {
				best, bestShared = n, shared
			}
			continue
		}
		if d, bd := strings.Count(n, "/"), strings.Count(best, "/"); d < bd || d == bd && (len(n) < len(best) || len(n) == len(best) && n < best) {
			best = n
		}
	}
	return best
}

// sharedFolders is how many folders, from the top, a and b have in
// common.
func sharedFolders(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	return n
}

// wikiKey is how a wiki link's name and a file's match: the base name
// without .md, in lower case.
func wikiKey(name string) string {
	base := path.Base(name)
	return strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(base, ".md"), ".MD"))
}

// markdown says whether a source's links are read.
func markdown(name string) bool {
	n := strings.ToLower(name)
	return name == NotesName || strings.HasSuffix(n, ".md") || strings.HasSuffix(n, ".markdown")
}
