// Package fork begins a conversation as another's prefix, for lnk agent
// chat fork: an owner's message edited, the conversation taken up again
// from just before it.
package fork

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/folder"
)

// ErrNotOwnerMessage: a fork's point names no message of the owner's.
var ErrNotOwnerMessage = errors.New("not a message from the owner")

// ErrBegun: a fork's new thread already has events.
var ErrBegun = errors.New("thread already begun")

// Thread begins newThread with the complete, immutable prefix of thread
// before event beforeSeq, a message from the owner (the one being
// edited): every event copied as it is, its number and time included, so
// the new conversation's prompt is the old one's up to there and the
// provider's cache holds. The tools thread was narrowed to go with it:
// those its folder keeps, and those keeper (the driver that keeps both
// conversations, when it keeps tools, such as gcs; else nil) keeps.
// Only events are copied, never a visible transcript: calls, their
// answers, thinking, summaries and window marks are all kept.
func Thread(ctx context.Context, p store.Paths, conv store.Conversations, keeper store.ToolsKeeper, thread, newThread string, beforeSeq int64) error {
	if err := fork(ctx, p, conv, keeper, thread, newThread, beforeSeq); err != nil {
		return fmt.Errorf("fork %s before #%d as %s: %w", thread, beforeSeq, newThread, err)
	}
	return nil
}

func fork(ctx context.Context, p store.Paths, conv store.Conversations, keeper store.ToolsKeeper, thread, newThread string, beforeSeq int64) error {
	if thread == newThread {
		return fmt.Errorf("%w: a fork is a new thread", ErrBegun)
	}
	src, err := p.Conversation(thread)
	if err != nil {
		return err
	}
	dst, err := p.Conversation(newThread)
	if err != nil {
		return err
	}
	if next, err := store.Next(ctx, conv, newThread); err != nil {
		return err
	} else if next != 1 {
		return fmt.Errorf("%w: %s has %d events", ErrBegun, newThread, next-1)
	}
	all, err := conv.Read(ctx, thread, 1)
	if err != nil {
		return err
	}
	at := -1
	for i, e := range all {
		if e.Seq == beforeSeq {
			at = i
			break
		}
	}
	if at < 0 {
		return fmt.Errorf("%w: %s has no event #%d", ErrNotOwnerMessage, thread, beforeSeq)
	}
	if e := all[at]; e.Kind != store.KindMessage {
		return fmt.Errorf("%w: #%d is a %s event, not a message", ErrNotOwnerMessage, beforeSeq, e.Kind)
	} else if e.From != "" {
		return fmt.Errorf("%w: #%d is a message from %s", ErrNotOwnerMessage, beforeSeq, e.From)
	}
	// The tools first: a conversation begun is never one with every tool
	// when its source had fewer.
	tools, err := narrowed(ctx, keeper, src, thread)
	if err != nil {
		return err
	}
	if tools != nil {
		if err := os.MkdirAll(dst, 0o700); err != nil {
			return err
		}
		if err := folder.WriteTools(filepath.Join(dst, folder.Tools), *tools); err != nil {
			return err
		}
		if keeper != nil {
			if _, err := keeper.NarrowTools(ctx, newThread, tools); err != nil && !errors.Is(err, store.ErrToolsUnsupported) {
				return err
			}
		}
	}
	for _, e := range all[:at] {
		if err := conv.Append(ctx, newThread, e); err != nil {
			return err
		}
	}
	return nil
}

// narrowed is the tools thread, in its folder src, was narrowed to: its
// folder's tools.json narrowed by what keeper keeps of it; nil for every
// tool.
func narrowed(ctx context.Context, keeper store.ToolsKeeper, src, thread string) (*[]string, error) {
	var tools *[]string
	b, err := folder.Read(filepath.Join(src, folder.Tools))
	if err != nil {
		return nil, err
	}
	if b != nil {
		if tools, err = store.ParseTools(b); err != nil {
			return nil, err
		}
	}
	if keeper == nil {
		return tools, nil
	}
	kept, err := keeper.ReadTools(ctx, thread)
	if errors.Is(err, store.ErrToolsUnsupported) {
		return tools, nil
	}
	if err != nil {
		return nil, err
	}
	return contract.Narrow(tools, kept), nil
}
