package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lnk-dev/link/contract"
)

// ErrToolsUnsupported is the error of a driver that doesn't store the tools
// its conversations were narrowed to (a store bridge whose driver doesn't).
// The conversation's folder keeps them instead (store/folder).
var ErrToolsUnsupported = errors.New("driver keeps no tools")

// ToolsKeeper is the optional capability of a driver that keeps the tools
// a conversation was narrowed to with the conversation itself, off the
// machine (spec: "tools_narrow, narrowed there in one step"), so a sleep
// that empties the machine's disk can't give a woken subagent every tool.
// Its semantics are store/folder's: nil is every tool, a list (empty for none)
// the tools narrowed to; a narrowing keeps the tools in both, never wider,
// in one step however many narrow at once.
type ToolsKeeper interface {
	// ReadTools reads the tools thread was narrowed to: nil when it never
	// was, else the list.
	ReadTools(ctx context.Context, thread string) (*[]string, error)
	// NarrowTools narrows thread's tools by the list by (nil: they stay), as
	// contract.Narrow does, and returns the tools it has from now on.
	NarrowTools(ctx context.Context, thread string, by *[]string) (*[]string, error)
}

// ParseTools reads a kept tools list (a folder's tools.json, a bucket's
// tools object): a JSON list of tool names, each as the contract allows
// one; anything else is ErrCorrupt.
func ParseTools(b []byte) (*[]string, error) {
	var tools []string
	if err := json.Unmarshal(b, &tools); err != nil {
		return nil, fmt.Errorf("%w: the tools list is not a list of names: %v", ErrCorrupt, err)
	}
	if tools == nil {
		return nil, fmt.Errorf("%w: the tools list is null, not a list", ErrCorrupt)
	}
	if len(tools) > contract.MaxTools {
		return nil, fmt.Errorf("%w: the tools list names %d tools, over %d", ErrCorrupt, len(tools), contract.MaxTools)
	}
	for _, t := range tools {
		if err := contract.CheckToolName(t); err != nil {
			return nil, fmt.Errorf("%w: the tools list: %v", ErrCorrupt, err)
		}
	}
	return &tools, nil
}

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
