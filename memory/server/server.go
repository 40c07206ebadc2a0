// Package server serves Link Memory as an MCP server over Streamable HTTP
// (github.com/modelcontextprotocol/go-sdk): the calls remember, forget,
// search, read, list and links, which Link Harness offers as
// memory__<call>, and the instructions its initialize answer gives. It
// listens on the loopback and answers at one secret address alone (Start),
// so no other local user's process reaches the agent's memory.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/memory"
)

// Instructions is what memory's initialize answer says of its calls, for
// the prompt's tools section: at most 2 KB.
const Instructions = `Your memory: notes about your owner kept for every conversation, and a search over what was said in all your conversations, your files and your skills.

- remember saves one fact worth keeping for later conversations (a preference, a name, a decision) as a dated line of memory/notes.md, which is in your prompt at every turn. Keep notes short; the notes are capped at 4,096 bytes in all. When remember says they are full, merge or drop notes in the same call: remember with replaces naming the notes the new one takes the place of, or forget the ones no longer true. A note already there word for word is refused.
- forget removes notes that are wrong or no longer needed, each named by its text.
- search finds what was said before (in any conversation) or written in your files, ranked, each result naming where it came from: a conversation and its message, or a file and its line. Use it before saying you don't know something your owner told you.
- read reads a file, memory/notes.md or a conversation (chats/<thread>) a range of lines at a time; follow a result of search with it, and read a skill's skills/<name>/SKILL.md before using the skill.
- list lists files/, skills/ (with each skill's description), instructions/ and the conversations (chats).
- links shows what a Markdown file links to, with broken links, and what links to it.

Paths are relative to your home: files/..., skills/..., instructions/..., memory/notes.md, chats/<thread>; "." or no path is the home's top level, and an absolute path is refused.`

// Options are a server's: Logger gets what goes wrong outside a call's
// answer (nil logs nothing); SessionIdle ends a session unused that
// long (0 is an hour).
type Options struct {
	Logger      *slog.Logger
	SessionIdle time.Duration
}

// New is the MCP server of m.
func New(m *memory.Memory) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "link-memory", Title: "Link Memory", Version: "1"}, &mcp.ServerOptions{Instructions: Instructions})
	c := calls{m: m}
	mcp.AddTool(s, &mcp.Tool{Name: "remember", Description: "Save a note, one line, dated, in memory/notes.md (in your prompt every turn; 4,096 bytes in all). replaces names notes (by their text) the new one takes the place of, in the same write.", Annotations: &mcp.ToolAnnotations{IdempotentHint: false, DestructiveHint: ptr(false)}}, c.remember)
	mcp.AddTool(s, &mcp.Tool{Name: "forget", Description: "Remove notes from memory/notes.md, each named by its text (or a part of it that names one note alone).", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}}, c.forget)
	mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "Search what was said in every conversation, your notes, files and skills: ranked results with snippets, each naming its conversation and message, or its file and line.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, c.search)
	mcp.AddTool(s, &mcp.Tool{Name: "read", Description: "Read lines of a file (files/..., skills/<name>/SKILL.md, instructions/...), memory/notes.md or a conversation (chats/<thread>): from a line, a number of lines (200 unless said, 1,000 at most).", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, c.read)
	mcp.AddTool(s, &mcp.Tool{Name: "list", Description: "List a folder of files/, skills/ (each skill with its description) or instructions/, or the conversations (chats); \".\" or no path lists the home's top level. Paths are relative to your home; an absolute path is refused.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, c.list)
	mcp.AddTool(s, &mcp.Tool{Name: "links", Description: "What a Markdown file or memory/notes.md links to (with line numbers, broken links said) and what links to it.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, c.links)
	return s
}

func ptr[T any](v T) *T { return &v }

// Handler serves m over Streamable HTTP, a session for each client that
// initializes, ended once unused for opts.SessionIdle.
func Handler(m *memory.Memory, opts Options) http.Handler {
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = time.Hour
	}
	s := New(m)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		Logger:         opts.Logger,
		SessionTimeout: opts.SessionIdle,
	})
}

type calls struct{ m *memory.Memory }

// RememberIn is remember's arguments.
type RememberIn struct {
	Note     string   `json:"note" jsonschema:"the note: one line of text, no line breaks"`
	Replaces []string `json:"replaces,omitempty" jsonschema:"notes (each by its text, or a part naming one alone) the new note takes the place of"`
}

// ForgetIn is forget's arguments.
type ForgetIn struct {
	Notes []string `json:"notes" jsonschema:"the notes to remove, each by its text or a part of it naming one note alone"`
}

// SearchIn is search's arguments.
type SearchIn struct {
	Query string `json:"query" jsonschema:"words to look for, in any language"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many results, 10 unless said, 50 at most"`
}

// ReadIn is read's arguments.
type ReadIn struct {
	Path  string `json:"path" jsonschema:"files/..., skills/<name>/SKILL.md, instructions/..., memory/notes.md or chats/<thread>"`
	From  int    `json:"from,omitempty" jsonschema:"the first line to read, from 1"`
	Lines int    `json:"lines,omitempty" jsonschema:"how many lines, 200 unless said, 1,000 at most"`
}

// PathIn is the arguments of list and links.
type PathIn struct {
	Path string `json:"path,omitempty" jsonschema:"files/..., skills, instructions, chats, or memory/notes.md (links)"`
}

// answer is a call's text answer; a refusal or failure is an error
// result, its text the error's. Either is said with no path of the
// machine: the agent's home is named relative to itself (Memory.Relative).
func (c calls) answer(text string, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		msg := c.m.Relative(err.Error())
		switch {
		case errors.Is(err, memory.ErrRefused):
			msg = "Refused: " + strings.TrimSuffix(msg, ": "+memory.ErrRefused.Error())
		case errors.Is(err, memory.ErrOutside):
			msg = "Refused: " + msg
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: c.m.Relative(text)}}}, nil, nil
}

func (c calls) remember(ctx context.Context, _ *mcp.CallToolRequest, in RememberIn) (*mcp.CallToolResult, any, error) {
	ch, err := c.m.Remember(ctx, in.Note, in.Replaces)
	if err != nil {
		return c.answer("", err)
	}
	verb := "Remembered"
	if len(in.Replaces) > 0 {
		verb = fmt.Sprintf("Remembered, in place of %d notes", len(in.Replaces))
	}
	return c.answer(fmt.Sprintf("%s. The notes are %d bytes of %d, in %d notes.", verb, ch.Size, memory.MaxNotes, len(ch.Notes)), nil)
}

func (c calls) forget(ctx context.Context, _ *mcp.CallToolRequest, in ForgetIn) (*mcp.CallToolResult, any, error) {
	ch, err := c.m.Forget(ctx, in.Notes)
	if err != nil {
		return c.answer("", err)
	}
	return c.answer(fmt.Sprintf("Forgotten. The notes are %d bytes of %d, in %d notes.", ch.Size, memory.MaxNotes, len(ch.Notes)), nil)
}
