package serve

import (
	"context"
	"errors"
	"io"

	"github.com/lnk-dev/link/acp"
)

// ServeStdio makes cfg's harness and speaks ACP for it over r and w, one
// message to a line, as an editor that runs ACP agents (or the hub)
// expects of a stdio agent: one agent, one connection, each session a
// thread, and is offered what editors show (acp.Options.Editor): the
// agent's sessions listed and closed, its model picker, the context used
// after each turn and each message's id. It finishes what a crash left, and returns once the input has
// ended (or ctx has) and every turn it began has ended; cfg.Addr and the
// endpoint are not used.
func ServeStdio(ctx context.Context, cfg Config, r io.Reader, w io.Writer) error {
	a, err := newServed(cfg, func(bool) {})
	if err != nil {
		return err
	}
	a.start()
	serr := acp.ServeWith(ctx, acp.NewStdio(r, w, 0), a.name, nil, a.h, acp.Options{Editor: true})
	return errors.Join(serr, a.close())
}
