package gcs

import (
	"context"
	"errors"
	"fmt"
	"math"

	"cloud.google.com/go/storage"
	"golang.org/x/sync/errgroup"
	"google.golang.org/api/iterator"

	"github.com/lnk-dev/link/store"
)

// fetchers bounds the objects one call reads at once.
const fetchers = 16

// Read reads the thread's events from from on. From the first, it lists
// the event objects, names only, in name order (which is number order),
// so a name that isn't an event's or a gap is found, and reads each.
// From a later number (a turn's read of what came since), it finds the
// last number as Latest does, without listing, one probe when this Driver
// is up to date, and reads the objects between by name: a list's cost
// may grow with the conversation (fake-gcs-server's walks the whole
// bucket at each), a probe's doesn't.
func (d *Driver) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	folder, err := d.folder(thread)
	if err != nil {
		return nil, fmt.Errorf("read %s from %d: %w", thread, from, err)
	}
	from = max(from, 1)
	var last int64
	if from == 1 {
		last, err = d.list(ctx, folder, from)
	} else {
		last, err = d.last(ctx, folder)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s from %d: %w", thread, from, err)
	}
	events, err := d.fetch(ctx, folder, from, last)
	if err != nil {
		return nil, fmt.Errorf("read %s from %d: %w", thread, from, err)
	}
	return events, nil
}

// Latest reads the thread's last n events: it finds the last number
// without listing (see last), then reads the n objects up to it by name.
func (d *Driver) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	folder, err := d.folder(thread)
	if err != nil {
		return nil, fmt.Errorf("latest %d of %s: %w", n, thread, err)
	}
	if n <= 0 {
		return nil, nil
	}
	last, err := d.last(ctx, folder)
	if err != nil {
		return nil, fmt.Errorf("latest %d of %s: %w", n, thread, err)
	}
	events, err := d.fetch(ctx, folder, max(1, last-int64(n)+1), last)
	if err != nil {
		return nil, fmt.Errorf("latest %d of %s: %w", n, thread, err)
	}
	return events, nil
}

// list lists the names of folder's events from from on and gives the
// number of the last, from-1 if there are none. The names must be from,
// from+1, and so on: Append writes no number before the one under it, and
// nothing deletes one, so another name or a gap is corruption.
func (d *Driver) list(ctx context.Context, folder string, from int64) (int64, error) {
	q := &storage.Query{Prefix: folder + eventsDir, StartOffset: eventName(folder, from)}
	if err := q.SetAttrSelection([]string{"Name"}); err != nil {
		return 0, err
	}
	it := d.bucket.Objects(ctx, q)
	want := from
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("list gs://%s/%s%s: %w", d.name, folder, eventsDir, err)
		}
		seq, err := parseSeq(folder, attrs.Name)
		if err != nil {
			return 0, fmt.Errorf("%w: object %s is not an event's: %v", store.ErrCorrupt, d.objectURL(attrs.Name), err)
		}
		if seq != want {
			return 0, fmt.Errorf("%w: object %s follows #%d: a gap", store.ErrCorrupt, d.objectURL(attrs.Name), want-1)
		}
		want++
	}
	if last := want - 1; last >= 1 {
		d.saw(folder, last)
	}
	return want - 1, nil
}

// last finds the number of folder's last event, 0 if it has none, by
// asking only whether objects exist. The numbers written are 1 to the
// last with no gap, so from the highest this Driver has seen it probes
// ahead in doubling steps until a number is free, then halves the range
// between: one probe when it is up to date, about 2·log2(n) for a
// conversation of n it has never seen. Appends meanwhile only move the
// answer on; it is the last at some moment during the call.
func (d *Driver) last(ctx context.Context, folder string) (int64, error) {
	lo := d.head(folder) // written, or 0
	step := int64(1)
	hi := lo + step // is it written?
	for {
		ok, err := d.exists(ctx, eventName(folder, hi))
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo = hi
		if step < math.MaxInt64/4 {
			step *= 2
		}
		hi = lo + step
		if hi < lo { // past the largest number
			hi = math.MaxInt64
		}
	}
	// lo is written (or 0), hi is not.
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := d.exists(ctx, eventName(folder, mid))
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	if lo >= 1 {
		d.saw(folder, lo)
	}
	return lo, nil
}

// fetch reads events first to last of folder by name, several at a time,
// in order. An object missing, too large, not an event, or of another
// number than its name's is store.ErrCorrupt naming it.
func (d *Driver) fetch(ctx context.Context, folder string, first, last int64) ([]store.Event, error) {
	if last < first {
		return nil, nil
	}
	events := make([]store.Event, last-first+1)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchers)
	for i := range events {
		seq := first + int64(i)
		g.Go(func() error {
			e, err := d.readEvent(ctx, eventName(folder, seq), seq)
			events[i] = e
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return events, nil
}

// readEvent reads and parses the object name, event seq.
func (d *Driver) readEvent(ctx context.Context, name string, seq int64) (store.Event, error) {
	// The line and its newline.
	b, _, err := d.readObject(ctx, name, store.MaxLine+1)
	switch {
	case errors.Is(err, storage.ErrObjectNotExist):
		return store.Event{}, fmt.Errorf("%w: object %s is missing", store.ErrCorrupt, d.objectURL(name))
	case errors.Is(err, errTooLarge):
		return store.Event{}, fmt.Errorf("%w: object %s: %v", store.ErrCorrupt, d.objectURL(name), err)
	case err != nil:
		return store.Event{}, fmt.Errorf("read %s: %w", d.objectURL(name), err)
	}
	e, err := store.ParseLine(b)
	if err != nil {
		return store.Event{}, fmt.Errorf("object %s: %w", d.objectURL(name), err)
	}
	if e.Seq != seq {
		return store.Event{}, fmt.Errorf("%w: object %s holds event %d", store.ErrCorrupt, d.objectURL(name), e.Seq)
	}
	return e, nil
}
