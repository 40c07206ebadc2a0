package gcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/storage"

	"github.com/lnk-dev/link/store"
)

// Append writes e as the object of its number, only if that name is free
// (ifGenerationMatch=0) and the number before it is written. A refused
// write is store.ErrSeqTaken, unless what holds the name is byte for byte
// this event: then it is this write sent again after its answer was lost
// (by the client's retry or the caller's), and it wrote them.
func (d *Driver) Append(ctx context.Context, thread string, e store.Event) error {
	folder, err := d.folder(thread)
	if err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	if e.Seq < 1 {
		return fmt.Errorf("append %s#%d: %w: numbers start at 1", thread, e.Seq, store.ErrSeqTaken)
	}
	body, err := store.MarshalLine(e)
	if err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	if len(body) > store.MaxLine {
		return fmt.Errorf("append %s#%d: event of %d bytes is over %d", thread, e.Seq, len(body), store.MaxLine)
	}
	// Free and the next: the number before it must be written. It never
	// goes away once written, so one seen needn't be asked about again.
	if prev := e.Seq - 1; prev >= 1 && d.head(folder) < prev {
		ok, err := d.exists(ctx, eventName(folder, prev))
		if err != nil {
			return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
		}
		if !ok {
			return fmt.Errorf("append %s#%d: %w: #%d is not written", thread, e.Seq, store.ErrSeqTaken, prev)
		}
		d.saw(folder, prev)
	}
	name := eventName(folder, e.Seq)
	err = d.writeObject(ctx, name, body, storage.Conditions{DoesNotExist: true})
	if isPrecondition(err) {
		err = d.holds(ctx, name, body)
	}
	if err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	d.saw(folder, e.Seq)
	return nil
}

// holds says whether the object name, there already, is body: nil if so,
// store.ErrSeqTaken if it is another event's.
func (d *Driver) holds(ctx context.Context, name string, body []byte) error {
	stored, _, err := d.readObject(ctx, name, int64(len(body)))
	if err != nil {
		// Larger than ours, it isn't ours.
		if errors.Is(err, errTooLarge) {
			return fmt.Errorf("%w: %s holds another event", store.ErrSeqTaken, d.objectURL(name))
		}
		return fmt.Errorf("read %s: %w", d.objectURL(name), err)
	}
	if !bytes.Equal(stored, body) {
		return fmt.Errorf("%w: %s holds another event", store.ErrSeqTaken, d.objectURL(name))
	}
	return nil
}
