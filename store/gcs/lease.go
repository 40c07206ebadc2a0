package gcs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/storage"

	"github.com/lnk-dev/link/store"
)

// maxLease bounds a lease object; one is well under 1 KiB.
const maxLease = 4 << 10

// leaseTries bounds how often a call reads the lease again after another
// writer changed it between its read and its write.
const leaseTries = 8

// Lease takes the thread's lease for holder, or renews it, until now+ttl.
// It reads lease.json and its generation, and writes the new lease only if
// the generation is still the one read (created only if absent when there
// was none), so of two takers racing, one wins and the other reads the
// winner's lease. A lease whose holder is empty, or that has expired, is
// free.
func (d *Driver) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	folder, err := d.folder(thread)
	if err != nil {
		return store.Lease{}, fmt.Errorf("lease %s for %s: %w", thread, holder, err)
	}
	if holder == "" {
		return store.Lease{}, fmt.Errorf("lease %s: no holder named", thread)
	}
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("lease %s for %s: ttl %v is not positive", thread, holder, ttl)
	}
	name := folder + leaseName
	for range leaseTries {
		cur, gen, err := d.readLease(ctx, name)
		if err != nil {
			return store.Lease{}, fmt.Errorf("lease %s for %s: %w", thread, holder, err)
		}
		now := d.now().UTC()
		next, err := store.Grant(cur, holder, ttl, now)
		if err != nil {
			return store.Lease{}, fmt.Errorf("lease %s for %s: %w", thread, holder, err)
		}
		err = d.writeLease(ctx, name, next, gen)
		if err == nil {
			return next, nil
		}
		if !isPrecondition(err) {
			return store.Lease{}, fmt.Errorf("lease %s for %s: %w", thread, holder, err)
		}
		// Changed since read: by another taker, or by this write whose
		// answer was lost and was sent again. Read it again and see.
	}
	return store.Lease{}, fmt.Errorf("lease %s for %s: %w: it changed %d times while being taken", thread, holder, store.ErrLeaseHeld, leaseTries)
}

// Release lets holder's lease of the thread go, by writing a lease with
// no holder over it if it is still the generation read. A lease held by
// another, or none, is left as it is.
func (d *Driver) Release(ctx context.Context, thread, holder string) error {
	folder, err := d.folder(thread)
	if err != nil {
		return fmt.Errorf("release %s for %s: %w", thread, holder, err)
	}
	name := folder + leaseName
	for range leaseTries {
		cur, gen, err := d.readLease(ctx, name)
		if err != nil {
			return fmt.Errorf("release %s for %s: %w", thread, holder, err)
		}
		if gen == 0 || cur.Holder == "" || cur.Holder != holder {
			return nil
		}
		err = d.writeLease(ctx, name, store.Lease{Expires: d.now().UTC()}, gen)
		if err == nil {
			return nil
		}
		if !isPrecondition(err) {
			return fmt.Errorf("release %s for %s: %w", thread, holder, err)
		}
	}
	return fmt.Errorf("release %s for %s: it changed %d times while being released", thread, holder, leaseTries)
}

// readLease reads the lease object and its generation: generation 0 and
// no lease if there is none.
func (d *Driver) readLease(ctx context.Context, name string) (store.Lease, int64, error) {
	b, gen, err := d.readObject(ctx, name, maxLease)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return store.Lease{}, 0, nil
	}
	if errors.Is(err, errTooLarge) {
		return store.Lease{}, 0, fmt.Errorf("%w: object %s: %v", store.ErrCorrupt, d.objectURL(name), err)
	}
	if err != nil {
		return store.Lease{}, 0, fmt.Errorf("read %s: %w", d.objectURL(name), err)
	}
	l, err := parseLease(b)
	if err != nil {
		return store.Lease{}, 0, fmt.Errorf("object %s: %w", d.objectURL(name), err)
	}
	return l, gen, nil
}

// writeLease writes l as the lease object if its generation is still gen
// (absent, for 0).
func (d *Driver) writeLease(ctx context.Context, name string, l store.Lease, gen int64) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	conds := storage.Conditions{GenerationMatch: gen}
	if gen == 0 {
		conds = storage.Conditions{DoesNotExist: true}
	}
	return d.writeObject(ctx, name, append(b, '\n'), conds)
}

// parseLease decodes a lease object: one JSON object with a holder and an
// expiry. Anything else is store.ErrCorrupt.
func parseLease(b []byte) (store.Lease, error) {
	var p *store.Lease
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return store.Lease{}, fmt.Errorf("%w: lease: %v", store.ErrCorrupt, err)
	}
	if dec.More() {
		return store.Lease{}, fmt.Errorf("%w: lease: more than one value", store.ErrCorrupt)
	}
	if p == nil {
		return store.Lease{}, fmt.Errorf("%w: lease: null", store.ErrCorrupt)
	}
	l := *p
	if l.Holder != "" && l.Expires.IsZero() {
		return store.Lease{}, fmt.Errorf("%w: lease of %s has no expiry", store.ErrCorrupt, l.Holder)
	}
	return l, nil
}
