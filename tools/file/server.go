package file

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Instructions is what the file tool's initialize answer says of its
// calls, for the prompt's tools section.
const Instructions = `Your workspace's files: read, write, replace and find, every path relative to the workspace (such as notes/todo.md); nothing outside it is reached.

- read gives a file's lines, numbered, 500 unless said (from, lines); a long file is read a part at a time, and a binary file is said so.
- write writes a whole file (made with its folders when missing), all at once: a reader never finds half of it.
- replace changes one place in a file: old must be the exact text there (without read's line numbers), found exactly once; when it isn't, it says how many times it occurs: give more of the lines around it. Prefer it to write for a change in a file that exists.
- find finds files by name (glob: *.md, src/**/*.go) and lines by a regular expression (pattern, RE2: (?i) for any case), sorted, leaving out what .gitignore leaves out and names beginning with "." unless asked.`

// Options are a server's: Logger gets what goes wrong outside a call's
// answer (nil logs nothing); SessionIdle ends a session unused that
// long (0 is an hour).
type Options struct {
	Logger      *slog.Logger
	SessionIdle time.Duration
}

// NewServer is the MCP server of w's calls.
func NewServer(w *Workspace) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "link-file", Title: "Link's files", Version: "1"}, &mcp.ServerOptions{Instructions: Instructions})
	c := calls{w: w}
	mcp.AddTool(s, &mcp.Tool{Name: "read", Description: fmt.Sprintf("Read a file's lines, numbered: from a line (1 unless said), a number of lines (%d unless said, %d at most; %d KiB of text at most). A binary file is said so, not shown.", DefaultLines, MaxLines, MaxReadBytes>>10), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, c.read)
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: fmt.Sprintf("Write a whole file (made, with its folders, when missing; replaced whole when there), all at once: a reader never finds half of it. At most %d MiB.", MaxContent>>20), Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true}}, c.write)
	mcp.AddTool(s, &mcp.Tool{Name: "replace", Description: "Replace one place in a file: old is the exact text there (spaces and line ends too, without read's line numbers), which must occur exactly once, else it says how many times it occurs; new takes its place. The file is written whole, all at once.", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}}, c.replace)
	mcp.AddTool(s, &mcp.Tool{Name: "find", Description: fmt.Sprintf("Find files by name (glob: *.md at any depth, src/**/*.go under the folder) and, with a pattern (a regular expression, RE2), the lines that match it; in a folder (path, the workspace unless said) and every folder under it, sorted by path and line, %d unless said, %d at most. What .gitignore leaves out and names beginning with \".\" are left out unless asked.", DefaultFound, MaxFound), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, c.find)
	return s
}

func ptr[T any](v T) *T { return &v }

// maxRequest bounds a request's body: the largest write, in JSON, with
// room for its escapes.
const maxRequest = 4*MaxContent + 64<<10

// Handler serves w over Streamable HTTP, a session for each client that
// initializes, ended once unused for opts.SessionIdle; a request's body
// is read at most maxRequest bytes.
func Handler(w *Workspace, opts Options) http.Handler {
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = time.Hour
	}
	s := NewServer(w)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		Logger:         opts.Logger,
		SessionTimeout: opts.SessionIdle,
	})
	return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		req.Body = http.MaxBytesReader(rw, req.Body, maxRequest)
		h.ServeHTTP(rw, req)
	})
}

type calls struct{ w *Workspace }

// ReadIn is read's arguments.
type ReadIn struct {
	Path  string `json:"path" jsonschema:"the file, relative to the workspace (notes/todo.md)"`
	From  int    `json:"from,omitempty" jsonschema:"the first line to read, from 1"`
	Lines int    `json:"lines,omitempty" jsonschema:"how many lines, 500 unless said, 2000 at most"`
}

// WriteIn is write's arguments.
type WriteIn struct {
	Path    string `json:"path" jsonschema:"the file, relative to the workspace"`
	Content string `json:"content" jsonschema:"the whole of the file"`
}

// ReplaceIn is replace's arguments.
type ReplaceIn struct {
	Path string `json:"path" jsonschema:"the file, relative to the workspace"`
	Old  string `json:"old" jsonschema:"the exact text to replace, found exactly once in the file"`
	New  string `json:"new" jsonschema:"the text that takes its place"`
}

// FindIn is find's arguments.
type FindIn struct {
	Path    string `json:"path,omitempty" jsonschema:"the folder to look in, relative to the workspace; all of it unless said"`
	Glob    string `json:"glob,omitempty" jsonschema:"names to find: *.md (a name at any depth), src/**/*.go (a path under the folder)"`
	Pattern string `json:"pattern,omitempty" jsonschema:"a regular expression (RE2) the lines found match; (?i) for any case"`
	Limit   int    `json:"limit,omitempty" jsonschema:"how many names or lines, 100 unless said, 1000 at most"`
	Hidden  bool   `json:"hidden,omitempty" jsonschema:"look at names beginning with . too"`
	Ignored bool   `json:"ignored,omitempty" jsonschema:"look at what .gitignore and .ignore files leave out too"`
}

// answer is a call's text answer; a refusal or failure is an error
// result, its text the error's.
func answer(text string, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		msg := err.Error()
		if IsRefusal(err) {
			msg = "Refused: " + msg
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

func (c calls) read(ctx context.Context, _ *mcp.CallToolRequest, in ReadIn) (*mcp.CallToolResult, any, error) {
	l, err := c.w.Read(ctx, in.Path, in.From, in.Lines)
	if err != nil {
		return answer("", err)
	}
	return answer(FormatLines(l), nil)
}

func (c calls) write(ctx context.Context, _ *mcp.CallToolRequest, in WriteIn) (*mcp.CallToolResult, any, error) {
	wr, err := c.w.Write(ctx, in.Path, []byte(in.Content))
	if err != nil {
		return answer("", err)
	}
	verb := "Wrote"
	if wr.New {
		verb = "Made"
	}
	return answer(fmt.Sprintf("%s %s: %d lines, %d bytes.", verb, wr.Path, wr.Lines, wr.Bytes), nil)
}

func (c calls) replace(ctx context.Context, _ *mcp.CallToolRequest, in ReplaceIn) (*mcp.CallToolResult, any, error) {
	r, err := c.w.Replace(ctx, in.Path, in.Old, in.New)
	if err != nil {
		return answer("", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Replaced in %s at line %d: %d lines for %d. It reads now:\n", r.Path, r.Line, r.NewLines, r.OldLines)
	numbered(&b, r.AroundFrom, r.Around)
	return answer(b.String(), nil)
}

func (c calls) find(ctx context.Context, _ *mcp.CallToolRequest, in FindIn) (*mcp.CallToolResult, any, error) {
	f, err := c.w.Find(ctx, Query(in))
	if err != nil {
		return answer("", err)
	}
	return answer(FormatFound(f, in.Pattern != ""), nil)
}

// FormatLines is a read's answer: a line saying what it is, then the
// lines numbered as cat -n numbers them.
func FormatLines(l Lines) string {
	var b strings.Builder
	switch {
	case l.Binary:
		fmt.Fprintf(&b, "%s is a binary file (%d bytes), not UTF-8 text: not shown.", l.Path, l.Size)
		return b.String()
	case len(l.Text) == 0:
		fmt.Fprintf(&b, "%s is empty.", l.Path)
		return b.String()
	}
	last := l.From + len(l.Text) - 1
	of := fmt.Sprintf("of %d", l.Total)
	if l.Total < 0 {
		of = "of more, not counted"
	}
	fmt.Fprintf(&b, "%s, lines %d-%d %s (%d bytes)", l.Path, l.From, last, of, l.Size)
	if l.CRLF {
		b.WriteString(`, its lines ending in "\r\n"`)
	}
	b.WriteString(":\n")
	numbered(&b, l.From, l.Text)
	var notes []string
	if l.Clipped > 0 {
		notes = append(notes, fmt.Sprintf("%d lines cut at %d bytes", l.Clipped, MaxLineBytes))
	}
	if l.Cut || l.Total < 0 || last < l.Total {
		notes = append(notes, fmt.Sprintf("more follows: read from line %d", last+1))
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, "(%s)\n", strings.Join(notes, "; "))
	}
	return b.String()
}

// numbered writes lines numbered from from, as cat -n does.
func numbered(b *strings.Builder, from int, lines []string) {
	for i, t := range lines {
		fmt.Fprintf(b, "%6d\t%s\n", from+i, t)
	}
}

// FormatFound is a find's answer: the names or lines found, then what
// was left out.
func FormatFound(f Found, lines bool) string {
	var b strings.Builder
	switch {
	case lines && len(f.Matches) == 0:
		fmt.Fprintf(&b, "No line matches, in %d files searched.\n", f.Searched)
	case lines:
		for _, m := range f.Matches {
			fmt.Fprintf(&b, "%s:%d: %s\n", m.Path, m.Line, m.Text)
		}
	case len(f.Files) == 0:
		b.WriteString("No file matches.\n")
	default:
		for _, name := range f.Files {
			b.WriteString(name + "\n")
		}
	}
	var notes []string
	if f.More {
		notes = append(notes, "more were found than shown: narrow the glob, the pattern or the folder, or raise limit")
	}
	if f.Binary > 0 {
		notes = append(notes, fmt.Sprintf("%d binary files not searched", f.Binary))
	}
	if f.Partial > 0 {
		notes = append(notes, fmt.Sprintf("%d files searched only their first %d MiB", f.Partial, MaxSearched>>20))
	}
	if f.Stopped != "" {
		notes = append(notes, "stopped: "+f.Stopped)
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, "(%s)\n", strings.Join(notes, "; "))
	}
	return b.String()
}
