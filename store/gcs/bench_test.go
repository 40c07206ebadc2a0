package gcs

import (
	"context"
	"fmt"
	"testing"

	"cloud.google.com/go/storage"
	"golang.org/x/sync/errgroup"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/storetest"
)

// The driver's benchmarks, against fake-gcs-server on 127.0.0.1 keeping
// its objects on disk (see newFakeOnDisk): appends, one durable before the
// next; and the latest 32 of conversations of 10k and 100k events, read
// by a Driver that has read them before.
//
// The fake's disk backend syncs each object it writes, so filling 100k
// events takes minutes on a disk; with its folder on tmpfs, where a sync
// costs nothing, about two and a half:
//
//	TMPDIR=/dev/shm go test -run XXX -bench . ./store/gcs/
func BenchmarkDriver(b *testing.B) {
	storetest.Benchmarks{
		Open: func(tb testing.TB) store.Conversations { return openDriver(tb, newFakeOnDisk(tb)) },
		Fill: fill,
	}.Run(b)
}

// Appends against the fake's memory backend, for comparison: its cost
// grows with the bucket (see newFakeOnDisk), so only appends are measured
// on it, and only as far as b.N takes them.
func BenchmarkAppendMemory(b *testing.B) {
	storetest.Benchmarks{
		Open:  func(tb testing.TB) store.Conversations { return openDriver(tb, newFake(tb)) },
		Sizes: []int{},
	}.Run(b)
}

// The latest 32 read by a Driver new each time, which has to find the
// last number by probing: what a process taking a conversation's turn for
// the first time pays.
func BenchmarkLatestCold(b *testing.B) {
	for _, n := range storetest.Sizes {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			srv := newFakeOnDisk(b)
			c := newClient(b, srv, nil)
			fill(b, Open(c, testBucket, testPrefix), "default", storetest.BenchEvents(n))
			ctx := context.Background()
			for b.Loop() {
				got, err := Open(c, testBucket, testPrefix).Latest(ctx, "default", storetest.LatestN)
				if err != nil || len(got) != storetest.LatestN || got[len(got)-1].Seq != int64(n) {
					b.Fatalf("latest %d: %d events, %v", storetest.LatestN, len(got), err)
				}
			}
		})
	}
}

// fill writes events as thread's conversation as Append would, the same
// objects of the same bytes, written only if absent, but several at once
// instead of each after the one before it.
func fill(tb testing.TB, c store.Conversations, thread string, events []store.Event) {
	tb.Helper()
	d := c.(*Driver)
	folder, err := d.folder(thread)
	if err != nil {
		tb.Fatal(err)
	}
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(fetchers)
	for _, e := range events {
		g.Go(func() error {
			body, err := store.MarshalLine(e)
			if err != nil {
				return err
			}
			return d.writeObject(ctx, eventName(folder, e.Seq), body, storage.Conditions{DoesNotExist: true})
		})
	}
	if err := g.Wait(); err != nil {
		tb.Fatalf("fill %s: %v", thread, err)
	}
}

// One request and its answer: whether an object exists, the unit Latest's
// probes are made of. The figures above are best read as multiples of it,
// since on a fake on the same machine they are mostly round trips.
func BenchmarkRoundTrip(b *testing.B) {
	srv := newFakeOnDisk(b)
	d := openDriver(b, srv)
	if err := d.Append(context.Background(), "default", storetest.BenchEvent(1)); err != nil {
		b.Fatal(err)
	}
	name := eventName(testPrefix+"/default/", 1)
	for b.Loop() {
		ok, err := d.exists(context.Background(), name)
		if err != nil || !ok {
			b.Fatalf("exists: %v, %v", ok, err)
		}
	}
}
