package drivers

import (
	"context"
	"fmt"

	"github.com/lnk-dev/link/store"
)

// A driver in its plugin keeps a conversation's tools as it does its
// events: through the child, with the driver (gcs keeps them in the
// bucket, beside the events), or store.ErrToolsUnsupported from a driver that
// doesn't, for the harness to keep them in the folder. It forgets a
// thread a convert moved away the same way (errors.ErrUnsupported from
// one that can't).
var (
	_ store.ToolsKeeper = (*child)(nil)
	_ store.Forgetter   = (*child)(nil)
)

func (c *child) ReadTools(ctx context.Context, thread string) (*[]string, error) {
	b, err := c.get()
	if err != nil {
		return nil, fmt.Errorf("read tools of %s: %w", thread, err)
	}
	return b.ReadTools(ctx, thread)
}

func (c *child) NarrowTools(ctx context.Context, thread string, by *[]string) (*[]string, error) {
	b, err := c.get()
	if err != nil {
		return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
	}
	return b.NarrowTools(ctx, thread, by)
}

func (c *child) Forget(ctx context.Context, thread string) error {
	b, err := c.get()
	if err != nil {
		return fmt.Errorf("forget %s: %w", thread, err)
	}
	return b.Forget(ctx, thread)
}
