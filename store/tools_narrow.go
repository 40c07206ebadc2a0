package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/lnk-dev/link/contract"
)

// ErrToolsNotKept: the driver keeps no tools of its conversations (a
// store bridge whose driver doesn't): the conversation's folder keeps
// them, as Folders does.
var ErrToolsNotKept = errors.New("driver keeps no tools")

// ToolsKeeper is the optional capability of a driver that keeps the tools
// a conversation was narrowed to with the conversation itself, off the
// machine (spec: "tools_narrow, narrowed there in one step"), so a sleep
// that empties the machine's disk can't give a woken subagent every tool.
// Its semantics are Folders': nil is every tool, a list (empty for none)
// the tools narrowed to; a narrowing keeps the tools in both, never wider,
// in one step however many narrow at once.
type ToolsKeeper interface {
	// ReadTools reads the tools thread was narrowed to: nil when it never
	// was, else the list.
	ReadTools(ctx context.Context, thread string) (*[]string, error)
	// NarrowTools narrows thread's tools by said (nil: they stay), as
	// contract.Narrow does, and returns the tools it has from now on.
	NarrowTools(ctx context.Context, thread string, said *[]string) (*[]string, error)
}

var _ ToolsKeeper = (*Folders)(nil)

// CheckTools refuses a tools list the contract wouldn't take, before a
// keeper writes it: more than contract.MaxTools names, or a name that
// isn't a tool's.
func CheckTools(tools []string) error {
	if len(tools) > contract.MaxTools {
		return fmt.Errorf("tools lists %d names, over %d", len(tools), contract.MaxTools)
	}
	for _, t := range tools {
		if err := contract.CheckToolName(t); err != nil {
			return fmt.Errorf("tools: %q: %w", t, err)
		}
	}
	return nil
}

// carryTools keeps a converted conversation's tools where its new way
// keeps them, never wider: the old driver's, when it kept them in its
// store, narrow the staged folder's tools.json (which the old folder's
// copy gave it), and the new driver, when it keeps tools, is narrowed by
// the same. A driver answering ErrToolsNotKept keeps none.
func (c *Converter) carryTools(ctx context.Context, src Conversations, thread, stage string) error {
	path := filepath.Join(stage, ToolsFile)
	var tools *[]string
	b, err := readKept(path)
	if err != nil {
		return err
	}
	if b != nil {
		if tools, err = ParseTools(b); err != nil {
			return fmt.Errorf("tools of %s: %w", thread, err)
		}
	}
	if tk, ok := src.(ToolsKeeper); ok {
		kept, err := tk.ReadTools(ctx, thread)
		if err != nil && !errors.Is(err, ErrToolsNotKept) {
			return err
		}
		if kept != nil {
			tools = contract.Narrow(tools, kept)
			b, err := json.Marshal(*tools)
			if err != nil {
				return err
			}
			if err := writeAtomic(path, append(b, '\n')); err != nil {
				return err
			}
		}
	}
	if tools == nil || inFolder(c.To) {
		return nil
	}
	dst, err := c.driver(c.To)
	if err != nil {
		return err
	}
	if tk, ok := dst.(ToolsKeeper); ok {
		if _, err := tk.NarrowTools(ctx, thread, tools); err != nil && !errors.Is(err, ErrToolsNotKept) {
			return err
		}
	}
	return nil
}
