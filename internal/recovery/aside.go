package recovery

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
)

// Asides sets aside a file of kept answers that doesn't read, for both
// stores: renamed path.corrupt-<time> (fsx.SetAside), for a person to
// look at, and said in the log; the store goes on with none of its
// answers. A file that can't be set aside is said once, however often
// it is met again.
type Asides struct {
	Logger *slog.Logger // nil discards
	said   sync.Map     // paths said in the log as left in place
}

// SetAside sets path aside, why being what didn't read, and says so
// with attrs; it returns the name it has now, or the rename's error.
func (s *Asides) SetAside(ctx context.Context, path string, why error, now time.Time, attrs ...slog.Attr) (string, error) {
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	aside, err := fsx.SetAside(path, now)
	if err == nil {
		log.LogAttrs(ctx, slog.LevelWarn, "set aside answers that don't read", append(attrs, slog.String("file", aside), slog.String("err", why.Error()))...)
		return aside, nil
	}
	if _, was := s.said.LoadOrStore(path, true); !was {
		log.LogAttrs(ctx, slog.LevelWarn, "answers that don't read, left in place", append(attrs, slog.String("file", path), slog.String("err", why.Error()), slog.String("rename", err.Error()))...)
	}
	return "", err
}
