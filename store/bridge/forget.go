package bridge

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// The forget call lets the served driver forget a thread its convert moved
// away (store.Forgetter); a driver that can't is answered unsupported, so
// the client's Forget is errors.ErrUnsupported.

var (
	_ store.Forgetter = (*Client)(nil)
	_ store.Forgetter = (*Child)(nil)
)

// Forget lets the served driver forget thread's events and lease:
// errors.ErrUnsupported when it can't.
func (c *Client) Forget(ctx context.Context, thread string) error {
	if err := contract.CheckThread(thread); err != nil {
		return fmt.Errorf("forget %s: %w", thread, err)
	}
	if err := c.do(ctx, http.MethodPost, pathForget, url.Values{"thread": {thread}}, nil, nil); err != nil {
		return fmt.Errorf("forget %s: %w", thread, err)
	}
	return nil
}

// Forget lets the child's driver forget thread; sent again after the child
// died under it, it forgets what is left.
func (c *Child) Forget(ctx context.Context, thread string) error {
	return c.call(ctx, func(cl *Client) error { return cl.Forget(ctx, thread) })
}
