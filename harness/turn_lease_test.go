package harness_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// callLog is the log driver, noting the name of each call a thread gets.
type callLog struct {
	*log.Driver
	mu    sync.Mutex
	calls map[string][]string
}

func (d *callLog) note(thread, call string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls[thread] = append(d.calls[thread], call)
}

// took is the calls thread got since the last ask.
func (d *callLog) took(thread string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.calls[thread]
	d.calls[thread] = nil
	return out
}

func (d *callLog) Append(ctx context.Context, thread string, e store.Event) error {
	d.note(thread, "Append")
	return d.Driver.Append(ctx, thread, e)
}

func (d *callLog) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	d.note(thread, "Read")
	return d.Driver.Read(ctx, thread, from)
}

func (d *callLog) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	d.note(thread, "Latest")
	return d.Driver.Latest(ctx, thread, n)
}

func (d *callLog) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	d.note(thread, "Lease")
	return d.Driver.Lease(ctx, thread, holder, ttl)
}

func (d *callLog) Release(ctx context.Context, thread, holder string) error {
	d.note(thread, "Release")
	return d.Driver.Release(ctx, thread, holder)
}

func (d *callLog) LeaseRead(ctx context.Context, thread, holder string, ttl time.Duration, from int64) (store.Lease, []store.Event, error) {
	d.note(thread, "LeaseRead")
	return d.Driver.LeaseRead(ctx, thread, holder, ttl, from)
}

func (d *callLog) ReleaseRead(ctx context.Context, thread, holder string, from int64) ([]store.Event, error) {
	d.note(thread, "ReleaseRead")
	return d.Driver.ReleaseRead(ctx, thread, holder, from)
}

// A warm turn makes four calls of the log, each one open of its file
// (store/log's TestWarmTurnSyscalls): the lease taken with the read of
// what came since the turn before (from the last event it kept), the
// message and the answer appended, the lease let go with the look for a
// message that joined as it went.
func TestWarmTurnDriverCalls(t *testing.T) {
	d := &callLog{calls: map[string][]string{}}
	r := newRig(t, func(c *harness.Config) {
		c.Drivers = func(p store.Paths) (map[string]store.Conversations, error) {
			d.Driver = log.Open(p.Chats())
			return map[string]store.Conversations{log.Name: d}, nil
		}
	})
	want := []string{"LeaseRead", "Append", "Append", "ReleaseRead"}
	for i, text := range []string{"one", "two", "three"} {
		r.Model.Push(model.Response{Text: "a-" + text})
		r.sayOK("telegram:5", text)
		if got := d.took("telegram:5"); i > 0 && !slices.Equal(got, want) {
			t.Fatalf("turn %d called the log %v, want %v", i+1, got, want)
		}
	}
}
