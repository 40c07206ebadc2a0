package harness

import (
	"context"
	"fmt"

	"github.com/lnk-dev/link/internal/fsx"
)

// Health is nil when the harness can take messages, else why not: its
// home can't be written (a read-only file system, a full disk), so every
// message would fail. Its words name no path of the machine, since
// /health answers anyone who asks.
func (h *Harness) Health(ctx context.Context) error {
	if err := fsx.CheckWritable(h.cfg.Home); err != nil {
		return fmt.Errorf("the home can't be written: %w", fsx.Cause(err))
	}
	return nil
}
