package harness

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
)

// callerError is the error a prompt's caller gets for err, one that never
// names a path of the machine: a refusal of the prompt (an *acp.Error, a
// *contract.RuleError) or any error that names none (a model's) as it
// is; an error of a file or a folder is logged whole and given by its
// cause alone (a symbolic link refused, permission denied, the disk
// full).
func (h *Harness) callerError(ctx context.Context, p acp.Prompt, err error) error {
	var ae *acp.Error
	var re *contract.RuleError
	if err == nil || errors.As(err, &ae) || errors.As(err, &re) || !h.namesPath(err) {
		return err
	}
	h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "prompt failed", slog.String("agent", p.Agent), slog.String("thread", p.Thread), slog.String("err", err.Error()))
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.Is(err, fsx.ErrSymlink) || errors.Is(err, store.ErrSymlink):
		return errors.New("the conversation's folder, or a file of it, is a symbolic link: refused (the agent's log names it)")
	case errors.Is(err, driver.ErrFilePerEvent):
		return errors.New("the conversation is " + driver.ErrFilePerEvent.Error() + " (the agent's log names the folder)")
	case errors.As(err, &pe):
		return errors.New("the agent's store failed: " + pe.Err.Error() + " (the agent's log names the file)")
	case errors.As(err, &le):
		return errors.New("the agent's store failed: " + le.Err.Error() + " (the agent's log names the file)")
	}
	return errors.New("the agent's store failed (the agent's log says why)")
}

// namesPath says whether err may name a path of the machine: it holds a
// file's error, or its words hold the home.
func (h *Harness) namesPath(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	if errors.As(err, &pe) || errors.As(err, &le) {
		return true
	}
	msg := err.Error()
	if strings.Contains(msg, h.cfg.Home) {
		return true
	}
	abs, aerr := filepath.Abs(h.cfg.Home)
	return aerr == nil && strings.Contains(msg, abs)
}
