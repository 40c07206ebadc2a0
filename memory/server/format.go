package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/memory"
)

func (c calls) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchIn) (*mcp.CallToolResult, any, error) {
	a, err := c.m.Search(ctx, in.Query, in.Limit)
	if err != nil {
		return c.answer("", err)
	}
	return c.answer(formatSearch(in.Query, a), nil)
}

// formatSearch is a search's answer as the model reads it: how it was
// ranked, whether the index was behind, then each result with where it
// came from and its snippet.
func formatSearch(q string, a memory.Found) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Ranked by %s.\n", a.Ranking)
	if a.Fresh.Pending > 0 {
		fmt.Fprintf(&b, "The index is behind: %d changed sources are not yet indexed, so this may miss what they hold; search again shortly.\n", a.Fresh.Pending)
	}
	if n := len(a.Fresh.Skipped); n > 0 {
		fmt.Fprintf(&b, "The index may be stale: %d sources couldn't be read (%s).\n", n, clipList(a.Fresh.Skipped, 3))
	}
	if n := len(a.Fresh.NotIndexed); n > 0 {
		fmt.Fprintf(&b, "Not searched: %d files past the 1 MiB memory indexes of a file (%s); read gives the first 1 MiB of one.\n", n, clipList(a.Fresh.NotIndexed, 3))
	}
	if len(a.Results) == 0 {
		fmt.Fprintf(&b, "Nothing matches %q.", q)
		return b.String()
	}
	fmt.Fprintf(&b, "%d results for %q, best first:\n", len(a.Results), q)
	for i, r := range a.Results {
		fmt.Fprintf(&b, "\n%d. %s", i+1, where(r))
		fmt.Fprintf(&b, "\n   %s\n", r.Snippet)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// where says where a result came from: a conversation's message, or a
// file's line.
func where(r memory.Result) string {
	lines := fmt.Sprintf("line %d", r.Line)
	if r.Lines > 1 {
		lines = fmt.Sprintf("lines %d-%d", r.Line, r.Line+r.Lines-1)
	}
	if r.Kind == memory.KindChat {
		return fmt.Sprintf("%s, message #%d (%s), %s", r.Source, r.Seq, r.Label, lines)
	}
	return fmt.Sprintf("%s, %s", r.Source, lines)
}

func clipList(s []string, n int) string {
	if len(s) <= n {
		return strings.Join(s, "; ")
	}
	return strings.Join(s[:n], "; ") + fmt.Sprintf("; and %d more", len(s)-n)
}

func (c calls) read(ctx context.Context, _ *mcp.CallToolRequest, in ReadIn) (*mcp.CallToolResult, any, error) {
	l, err := c.m.Read(ctx, in.Path, in.From, in.Lines)
	if err != nil {
		return c.answer("", err)
	}
	var b strings.Builder
	switch {
	case len(l.Text) == 0:
		fmt.Fprintf(&b, "%s is empty.", l.Name)
		return c.answer(b.String(), nil)
	default:
		last := l.From + len(l.Text) - 1
		fmt.Fprintf(&b, "%s, lines %d-%d of %d", l.Name, l.From, last, l.Total)
		if l.Cut {
			fmt.Fprintf(&b, " (cut at %d bytes; read on from line %d)", memory.MaxReadBytes, last+1)
		} else if last < l.Total {
			fmt.Fprintf(&b, " (read on from line %d)", last+1)
		}
		b.WriteString(":\n")
	}
	b.WriteString(strings.Join(l.Text, "\n"))
	return c.answer(b.String(), nil)
}

func (c calls) list(ctx context.Context, _ *mcp.CallToolRequest, in PathIn) (*mcp.CallToolResult, any, error) {
	l, err := c.m.List(ctx, in.Path)
	if err != nil {
		return c.answer("", err)
	}
	name := in.Path
	if name == "" {
		name = "your home"
	}
	if len(l.Entries) == 0 {
		return c.answer(name+" is empty.", nil)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s holds:\n", name)
	for _, e := range l.Entries {
		switch {
		case e.Folder && e.About != "":
			fmt.Fprintf(&b, "%s/ (skill: %s)\n", e.Name, e.About)
		case e.Folder:
			fmt.Fprintf(&b, "%s/\n", e.Name)
		case e.Size > 0:
			fmt.Fprintf(&b, "%s (%d bytes)\n", e.Name, e.Size)
		default:
			fmt.Fprintf(&b, "%s\n", e.Name)
		}
	}
	if l.More {
		fmt.Fprintf(&b, "and more past %d, not listed (list a folder within).\n", memory.MaxList)
	}
	return c.answer(strings.TrimSuffix(b.String(), "\n"), nil)
}

func (c calls) links(ctx context.Context, _ *mcp.CallToolRequest, in PathIn) (*mcp.CallToolResult, any, error) {
	l, err := c.m.Links(ctx, in.Path)
	if err != nil {
		return c.answer("", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s links to %d:\n", l.Name, len(l.Out))
	for _, o := range l.Out {
		switch {
		case o.Resolved == "":
			fmt.Fprintf(&b, "line %d: %s (outside your files)\n", o.Line, o.Target)
		case o.Broken:
			fmt.Fprintf(&b, "line %d: %s -> %s (broken: no such file)\n", o.Line, o.Target, o.Resolved)
		default:
			fmt.Fprintf(&b, "line %d: %s -> %s\n", o.Line, o.Target, o.Resolved)
		}
	}
	fmt.Fprintf(&b, "Linked from %d:\n", len(l.In))
	for _, in := range l.In {
		fmt.Fprintf(&b, "%s line %d: %s\n", in.From, in.Line, in.Target)
	}
	return c.answer(strings.TrimSuffix(b.String(), "\n"), nil)
}
