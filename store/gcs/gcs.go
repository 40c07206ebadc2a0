// Package gcs keeps an agent's conversations in a Google Cloud Storage
// bucket (lnk-gcs): an object per event, written only if its name is free
// (ifGenerationMatch=0), and an object per conversation for the lease that
// says a turn runs, replaced only if it is still the generation read. Those
// two conditions are all an append-if-free and a lease need, so there is no
// database to run.
//
// A conversation's objects, under the agent's prefix:
//
//	<prefix>/<thread folder>/events/00000000000000000042.json   event 42, its JSON line
//	<prefix>/<thread folder>/lease.json                         {"holder":…,"expires":…}
//
// Event names are zero-padded so that listing in name order is listing in
// number order. An event object is never replaced or deleted.
package gcs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
)

// Name is the driver's name, as a conversation folder's marker says it
// (store.gcs) and its plugin's (lnk-gcs).
const Name = "gcs"

// The driver registers its name: its conversations' folders hold only
// its marker, store.gcs (driver.Mark).
func init() { driver.Register(driver.Driver{Name: Name}) }

// Driver keeps the conversations of one agent under a prefix of a bucket.
// Its methods are safe for concurrent use, and any number of Drivers, in
// any processes, may share the same prefix.
type Driver struct {
	// Now is the clock leases are judged by; time.Now unless set. Set it
	// before the Driver is used.
	Now func() time.Time

	bucket *storage.BucketHandle
	name   string // the bucket's name, for errors
	prefix string // "" or ending in "/"

	// heads holds, for each thread folder, the highest number this Driver
	// has seen written. An event is never deleted, so it is a floor that
	// is never wrong: Latest probes forward from it instead of searching
	// from 1, and Append needn't ask whether the number before it exists.
	// Nothing is lost with it: a new Driver finds the same by searching.
	mu    sync.Mutex
	heads map[string]int64
}

var (
	_ store.Conversations = (*Driver)(nil)
	_ store.LatestReader  = (*Driver)(nil)
)

// Open returns a Driver keeping conversations in bucket under prefix, the
// agent's (such as "agents/main/chats"). The client is the caller's, and
// stays open after the Driver is no longer used.
func Open(client *storage.Client, bucket, prefix string) *Driver {
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &Driver{
		Now:    time.Now,
		bucket: client.Bucket(bucket),
		name:   bucket,
		prefix: prefix,
		heads:  map[string]int64{},
	}
}

// now is the Driver's clock.
func (d *Driver) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

// folder is the prefix of thread's objects, ending in "/": the agent's
// prefix and the thread's folder name. A thread id the contract refuses
// has none.
func (d *Driver) folder(thread string) (string, error) {
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return "", err
	}
	return d.prefix + name + "/", nil
}

// head is the highest number known written in folder, 0 if none is.
func (d *Driver) head(folder string) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.heads[folder]
}

// saw records that event seq of folder is written.
func (d *Driver) saw(folder string, seq int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if seq > d.heads[folder] {
		d.heads[folder] = seq
	}
}

// objectURL names an object in errors as gs://bucket/name.
func (d *Driver) objectURL(name string) string {
	return "gs://" + d.name + "/" + name
}

// errTooLarge: an object is larger than its reader allows.
var errTooLarge = errors.New("object too large")

// readObject reads the whole of an object and the generation read,
// refusing (errTooLarge) one larger than limit. An absent object is
// storage.ErrObjectNotExist.
func (d *Driver) readObject(ctx context.Context, name string, limit int64) ([]byte, int64, error) {
	r, err := d.bucket.Object(name).NewReader(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	if r.Attrs.Size > limit {
		return nil, 0, fmt.Errorf("%w: %d bytes, over %d", errTooLarge, r.Attrs.Size, limit)
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, 0, err
	}
	if int64(len(b)) > limit {
		return nil, 0, fmt.Errorf("%w: over %d bytes", errTooLarge, limit)
	}
	return b, r.Attrs.Generation, nil
}

// writeObject writes body as the object name if conds hold. The write
// is sent in one request the client can send again: conds make it
// idempotent, so the client's default policy retries it after a lost
// answer or a 5xx, and a caller tells a retry that found its own write
// there (a precondition failure) by reading what is there.
func (d *Driver) writeObject(ctx context.Context, name string, body []byte, conds storage.Conditions) error {
	o := d.bucket.Object(name).If(conds).Retryer(storage.WithPolicy(storage.RetryIdempotent))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a Writer not closed is abandoned by cancelling its context
	w := o.NewWriter(ctx)
	w.ContentType = "application/json"
	// A chunk larger than the body makes the upload one request whose
	// body the client keeps, so it can send it again; with no chunk it
	// couldn't, and the default (16 MiB) buffers far more than an event.
	w.ChunkSize = chunkFor(len(body))
	if _, err := w.Write(body); err != nil {
		return err
	}
	return w.Close()
}

// chunkFor is the smallest upload chunk larger than n bytes: a multiple
// of googleapi.MinUploadChunkSize, which the client rounds up to anyway.
func chunkFor(n int) int {
	return (n/googleapi.MinUploadChunkSize + 1) * googleapi.MinUploadChunkSize
}

// exists says whether the object name is there.
func (d *Driver) exists(ctx context.Context, name string) (bool, error) {
	_, err := d.bucket.Object(name).Attrs(ctx)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// isPrecondition says whether err is the store refusing a write whose
// condition failed: HTTP 412, or gRPC's FailedPrecondition.
func isPrecondition(err error) bool {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code == http.StatusPreconditionFailed
	}
	return status.Code(err) == codes.FailedPrecondition
}
