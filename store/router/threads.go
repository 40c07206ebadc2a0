package router

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// Threads lists the threads of the agent at p that have a folder, in
// order. Names no thread has (a convert's leftovers, events.sqlite) are
// passed over, and so is a thread's folder that is a symbolic link: no
// reader follows one (ListThreads names them).
func Threads(ctx context.Context, p store.Paths) ([]string, error) {
	threads, _, err := ListThreads(ctx, p)
	return threads, err
}

// ListThreads lists the threads of the agent at p that have a folder, in
// order, as Threads does, and apart from them, in order, the threads whose
// folder is a symbolic link: refused, never followed (nothing is read
// through the link), for a caller that must say a conversation was left
// out, as an export of every conversation does.
func ListThreads(ctx context.Context, p store.Paths) (threads, links []string, err error) {
	chats, err := OpenChats(p)
	if chats == nil || err != nil {
		return nil, nil, err
	}
	entries, err := chats.ReadDir(-1)
	chats.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("list threads of %s: %w", p.Agent, err)
	}
	for _, e := range entries {
		link := e.Type()&fs.ModeSymlink != 0
		if !e.IsDir() && !link {
			continue
		}
		th, err := contract.FolderThread(e.Name())
		if err != nil {
			continue
		}
		// A folder whose name reads as a thread but isn't that thread's
		// own (none today: the names reverse exactly) is passed over.
		if name, err := contract.ThreadFolder(th); err != nil || filepath.Base(name) != e.Name() {
			continue
		}
		if link {
			links = append(links, th)
		} else {
			threads = append(threads, th)
		}
	}
	sort.Strings(threads)
	sort.Strings(links)
	return threads, links, ctx.Err()
}

// ErrChatsSymlink: the agent's conversations folder (chats/) is a symbolic
// link, refused: none of its conversations is read or written where it
// points, which may be another agent's. It wraps fsx.ErrSymlink.
var ErrChatsSymlink = fmt.Errorf("the agent's conversations folder (chats) is a symbolic link, refused: never followed: %w", fsx.ErrSymlink)

// CheckChats refuses the agent's conversations folder when it is a
// symbolic link (ErrChatsSymlink); none is no refusal.
func CheckChats(p store.Paths) error {
	if fi, err := os.Lstat(p.Chats()); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s: %w", p.Chats(), ErrChatsSymlink)
	}
	return nil
}

// OpenChats opens the agent's conversations folder to list it, never
// through a link (ErrChatsSymlink); nil when there is none.
func OpenChats(p store.Paths) (*os.File, error) {
	d, err := fsx.Open(p.Chats(), os.O_RDONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, fsx.ErrSymlink):
		return nil, fmt.Errorf("%s: %w", p.Chats(), ErrChatsSymlink)
	case err != nil:
		return nil, fmt.Errorf("list threads of %s: %w", p.Agent, err)
	}
	return d, nil
}
