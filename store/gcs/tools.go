package gcs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"cloud.google.com/go/storage"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// toolsName is the name of the object under a thread's folder that keeps
// the tools it was narrowed to, beside its events: a JSON list of names,
// as a local folder's tools.json (store.ParseTools reads both).
const toolsName = "tools.json"

// maxToolsObject bounds a tools object: contract.MaxTools names of at
// most contract.MaxName characters each is well under it.
const maxToolsObject = 1 << 20

// toolsTries bounds how often a narrowing reads the object again after
// another narrower changed it between its read and its write. Each such
// change is another narrowing that landed, so eight at once need at most
// eight tries; the rest is room.
const toolsTries = 32

var _ store.ToolsKeeper = (*Driver)(nil)

// ReadTools reads the tools thread was narrowed to from its tools object:
// nil when there is none (every tool).
func (d *Driver) ReadTools(ctx context.Context, thread string) (*[]string, error) {
	folder, err := d.folder(thread)
	if err != nil {
		return nil, fmt.Errorf("read tools of %s: %w", thread, err)
	}
	tools, _, err := d.readTools(ctx, folder+toolsName)
	if err != nil {
		return nil, fmt.Errorf("read tools of %s: %w", thread, err)
	}
	return tools, nil
}

// NarrowTools narrows thread's tools by the list by in one step: it reads the
// tools object and its generation, and writes the narrowed list only if
// the generation is still the one read (only if still absent when there
// was none), reading again when another narrower got there first. Of
// narrowers racing, each write narrows what the last landed one left, so
// the object ends as the tools in every list. It writes only when the
// tools change.
func (d *Driver) NarrowTools(ctx context.Context, thread string, by *[]string) (*[]string, error) {
	if by == nil {
		return d.ReadTools(ctx, thread)
	}
	if err := store.CheckTools(*by); err != nil {
		return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
	}
	folder, err := d.folder(thread)
	if err != nil {
		return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
	}
	name := folder + toolsName
	for range toolsTries {
		kept, gen, err := d.readTools(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
		}
		out := contract.Narrow(kept, by)
		if kept != nil && slices.Equal(*kept, *out) {
			return out, nil
		}
		b, err := json.Marshal(*out)
		if err != nil {
			return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
		}
		conds := storage.Conditions{GenerationMatch: gen}
		if gen == 0 {
			conds = storage.Conditions{DoesNotExist: true}
		}
		err = d.writeObject(ctx, name, append(b, '\n'), conds)
		if err == nil {
			return out, nil
		}
		if !isPrecondition(err) {
			return nil, fmt.Errorf("narrow tools of %s: write %s: %w", thread, d.objectURL(name), err)
		}
		// Changed since read: by another narrower, or by this write whose
		// answer was lost and was sent again. Read it again and see.
	}
	return nil, fmt.Errorf("narrow tools of %s: it changed %d times while being narrowed", thread, toolsTries)
}

// readTools reads the tools object and its generation: nil and 0 if
// there is none. One that doesn't read as a list of tools' names is
// store.ErrCorrupt.
func (d *Driver) readTools(ctx context.Context, name string) (*[]string, int64, error) {
	b, gen, err := d.readObject(ctx, name, maxToolsObject)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return nil, 0, nil
	}
	if errors.Is(err, errTooLarge) {
		return nil, 0, fmt.Errorf("%w: object %s: %v", store.ErrCorrupt, d.objectURL(name), err)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", d.objectURL(name), err)
	}
	tools, err := store.ParseTools(b)
	if err != nil {
		return nil, 0, fmt.Errorf("object %s: %w", d.objectURL(name), err)
	}
	return tools, gen, nil
}
