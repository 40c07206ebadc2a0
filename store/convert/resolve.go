package convert

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
)

// Resolve finishes or undoes what a convert stopped midway left in
// the conversations folder of the agent at p, so every conversation is
// read where it is; see Job for the states. A harness may call it
// as it starts; a convert calls it first.
func Resolve(ctx context.Context, p store.Paths, drivers map[string]driver.Opener) (unforgotten []string, err error) {
	c := &Job{Paths: p, Drivers: drivers}
	defer c.close()
	chats := p.Chats()
	if _, err := os.Stat(chats); err != nil {
		return nil, nil
	}
	unlock, err := fsx.LockDir(ctx, chats)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return c.resolve(ctx)
}

// resolve brings every conversation a convert left midway to one whole
// state, and returns the threads whose old rows a driver couldn't forget.
func (c *Job) resolve(ctx context.Context) ([]string, error) {
	chats := c.Paths.Chats()
	entries, err := os.ReadDir(chats)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, e := range entries {
		for _, prefix := range []string{convertPrefix, oldPrefix} {
			if name, ok := strings.CutPrefix(e.Name(), prefix); ok {
				names[name] = true
			}
		}
	}
	sorted := make([]string, 0, len(names))
	for name := range names {
		sorted = append(sorted, name)
	}
	sort.Strings(sorted)
	var unforgotten []string
	for _, name := range sorted {
		if err := ctx.Err(); err != nil {
			return unforgotten, err
		}
		forgot, err := c.resolveOne(ctx, chats, name)
		if err != nil {
			return unforgotten, fmt.Errorf("resolve %s: %w", name, err)
		}
		if !forgot {
			unforgotten = append(unforgotten, name)
		}
	}
	return unforgotten, nil
}

// resolveOne resolves the convert of the conversation in folder name.
func (c *Job) resolveOne(ctx context.Context, chats, name string) (forgot bool, err error) {
	thread, err := contract.FolderThread(name)
	if err != nil {
		return true, nil // no convert's: a name no thread has is left alone
	}
	live := filepath.Join(chats, name)
	old := filepath.Join(chats, oldPrefix+name)
	stageRoot := filepath.Join(chats, convertPrefix+name)
	stage := filepath.Join(stageRoot, name)
	hasLive, err := exists(live)
	if err != nil {
		return false, err
	}
	hasOld, err := exists(old)
	if err != nil {
		return false, err
	}
	hasStage, err := exists(stage)
	if err != nil {
		return false, err
	}
	switch {
	case !hasLive && hasOld && hasStage:
		// The new way was whole before the old went aside: put it in.
		if err := os.Rename(stage, live); err != nil {
			return false, err
		}
		hasStage = false
	case !hasLive && hasOld:
		// Nothing new to put in: put the old back.
		if err := os.Rename(old, live); err != nil {
			return false, err
		}
		hasOld = false
	}
	if err := fsx.SyncDir(chats); err != nil {
		return false, err
	}
	liveKind, err := driver.Of(live)
	if err != nil {
		return false, err
	}
	forgot = true
	// A driver's rows are the conversation's only where its folder's
	// marker names that driver: an old way's, or a new way's half written,
	// are forgotten.
	for _, dir := range []struct {
		path string
		has  bool
	}{{old, hasOld}, {stage, hasStage}} {
		if !dir.has {
			continue
		}
		kind, err := driver.Of(dir.path)
		if err != nil {
			return false, err
		}
		if kind == "" || inFolder(kind) || kind == liveKind {
			continue
		}
		if c.Drivers[kind] == nil {
			forgot = false
			continue
		}
		ok, err := c.forget(ctx, kind, thread)
		if err != nil {
			return false, err
		}
		forgot = forgot && ok
	}
	if err := os.RemoveAll(old); err != nil {
		return false, err
	}
	return forgot, os.RemoveAll(stageRoot)
}
