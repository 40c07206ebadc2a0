package serve

import (
	"context"
	"fmt"

	"github.com/lnk-dev/link/store"
)

// A driver the harness doesn't link keeps a conversation's tools as it
// does its events: through its child, with the driver (gcs keeps them in
// the bucket, beside the events), or store.ErrToolsNotKept from a driver
// that doesn't, for the harness to keep them in the folder.
var _ store.ToolsKeeper = (*sandbox)(nil)

func (s *sandbox) ReadTools(ctx context.Context, thread string) (*[]string, error) {
	c, err := s.get()
	if err != nil {
		return nil, fmt.Errorf("read tools of %s: %w", thread, err)
	}
	return c.ReadTools(ctx, thread)
}

func (s *sandbox) NarrowTools(ctx context.Context, thread string, said *[]string) (*[]string, error) {
	c, err := s.get()
	if err != nil {
		return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
	}
	return c.NarrowTools(ctx, thread, said)
}
