package drivers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
)

// bridged is a driver reached through a store bridge already running (a
// blank unit's, given at its binding, or the one beside the agent) in
// place of a child: dialed at its first call, and again at the next after
// a dial that failed.
type bridged struct {
	cfg  bridge.Config
	err  error  // why it can't be reached at all, said at each call
	what string // the driver and its bridge, in a dial's error
	hint string // what to do when none answers there

	mu sync.Mutex
	c  *bridge.Client
}

var (
	_ store.Conversations = (*bridged)(nil)
	_ store.LatestReader  = (*bridged)(nil)
	_ store.ToolsKeeper   = (*bridged)(nil)
	_ store.Forgetter     = (*bridged)(nil)
	_ store.Closer        = (*bridged)(nil)
)

func (b *bridged) client(ctx context.Context) (*bridge.Client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c != nil {
		return b.c, nil
	}
	if b.err != nil {
		return nil, b.err
	}
	c, err := bridge.Dial(ctx, b.cfg)
	if err != nil {
		switch {
		case b.what == "":
			return nil, err
		case errors.Is(err, bridge.ErrRefused):
			return nil, fmt.Errorf("%s: %w: start it with the agent's key, the harness's own key file", b.what, err)
		}
		return nil, fmt.Errorf("%s: %w: %s", b.what, err, b.hint)
	}
	b.c = c
	return c, nil
}

func (b *bridged) Append(ctx context.Context, thread string, e store.Event) error {
	c, err := b.client(ctx)
	if err != nil {
		return err
	}
	return c.Append(ctx, thread, e)
}

func (b *bridged) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	c, err := b.client(ctx)
	if err != nil {
		return nil, err
	}
	return c.Read(ctx, thread, from)
}

func (b *bridged) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	c, err := b.client(ctx)
	if err != nil {
		return nil, err
	}
	return c.Latest(ctx, thread, n)
}

func (b *bridged) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	c, err := b.client(ctx)
	if err != nil {
		return store.Lease{}, err
	}
	return c.Lease(ctx, thread, holder, ttl)
}

func (b *bridged) Release(ctx context.Context, thread, holder string) error {
	c, err := b.client(ctx)
	if err != nil {
		return err
	}
	return c.Release(ctx, thread, holder)
}

func (b *bridged) ReadTools(ctx context.Context, thread string) (*[]string, error) {
	c, err := b.client(ctx)
	if err != nil {
		return nil, err
	}
	return c.ReadTools(ctx, thread)
}

func (b *bridged) NarrowTools(ctx context.Context, thread string, by *[]string) (*[]string, error) {
	c, err := b.client(ctx)
	if err != nil {
		return nil, err
	}
	return c.NarrowTools(ctx, thread, by)
}

func (b *bridged) Forget(ctx context.Context, thread string) error {
	c, err := b.client(ctx)
	if err != nil {
		return err
	}
	return c.Forget(ctx, thread)
}

// Close closes the client, if one was dialed.
func (b *bridged) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c == nil {
		return nil
	}
	err := b.c.Close()
	b.c = nil
	return errors.Join(err)
}
