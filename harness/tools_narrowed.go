package harness

import (
	"context"
	"errors"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// The tools a conversation was narrowed to are kept by the driver that
// keeps it when that driver keeps them (store.ToolsKeeper: gcs, in the
// bucket beside its events, so a sleep that empties the machine's disk
// can't widen them), else in its folder's tools.json (folder.Files).

// toolsKeeper is the conversation's driver when it keeps tools: the one
// holding it, else the one its folder names, else, for one not begun, the
// one a new conversation begins with. Nil when the folder keeps them.
func (c *conv) toolsKeeper() (store.ToolsKeeper, error) {
	kind := c.pinned.Kind()
	if kind == "" {
		found := false
		for _, d := range c.drivers {
			if _, ok := d.(store.ToolsKeeper); ok {
				found = true
				break
			}
		}
		if !found {
			return nil, nil // no driver keeps tools: spare the folder's look
		}
		var err error
		if kind, err = c.router.Kind(c.thread); err != nil {
			return nil, err
		}
	}
	tk, _ := c.drivers[kind].(store.ToolsKeeper)
	return tk, nil
}

// readTools reads the tools the conversation was narrowed to: nil for
// every tool. A narrowing its folder kept before its driver kept them (a
// conversation converted since) narrows the driver's, so it stays.
func (c *conv) readTools(ctx context.Context) (*[]string, error) {
	tk, err := c.toolsKeeper()
	if err != nil {
		return nil, err
	}
	local, err := c.folders.ReadTools(ctx, c.thread)
	if err != nil || tk == nil {
		return local, err
	}
	var tools *[]string
	if local != nil {
		tools, err = tk.NarrowTools(ctx, c.thread, local)
	} else {
		tools, err = tk.ReadTools(ctx, c.thread)
	}
	if errors.Is(err, store.ErrToolsUnsupported) {
		return local, nil
	}
	return tools, err
}

// narrowTools narrows the conversation's tools by a message's list (nil:
// they stay), where they are kept, and returns them from now on.
func (c *conv) narrowTools(ctx context.Context, by *[]string) (*[]string, error) {
	if by == nil {
		return c.readTools(ctx)
	}
	tk, err := c.toolsKeeper()
	if err != nil {
		return nil, err
	}
	if tk == nil {
		return c.folders.NarrowTools(ctx, c.thread, by)
	}
	local, err := c.folders.ReadTools(ctx, c.thread)
	if err != nil {
		return nil, err
	}
	tools, err := tk.NarrowTools(ctx, c.thread, contract.Narrow(local, by))
	if errors.Is(err, store.ErrToolsUnsupported) {
		return c.folders.NarrowTools(ctx, c.thread, by)
	}
	return tools, err
}
