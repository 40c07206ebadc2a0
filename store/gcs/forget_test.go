package gcs

import (
	"context"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

func TestForget(t *testing.T) {
	ctx := context.Background()
	d := openDriver(t, newFake(t))
	for _, thread := range []string{"telegram:1", "telegram:2"} {
		for seq := int64(1); seq <= 3; seq++ {
			if err := d.Append(ctx, thread, store.Event{Seq: seq, Time: time.Now(), Kind: store.KindMessage, Text: "x"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := d.Lease(ctx, "telegram:1", "turn", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := d.Forget(ctx, "telegram:1"); err != nil {
		t.Fatal(err)
	}
	if es, err := d.Read(ctx, "telegram:1", 1); err != nil || len(es) != 0 {
		t.Fatalf("after Forget the thread reads %d events, %v", len(es), err)
	}
	if last, err := store.Latest(ctx, d, "telegram:1", 1); err != nil || len(last) != 0 {
		t.Fatalf("after Forget the latest is %v, %v", last, err)
	}
	if _, err := d.Lease(ctx, "telegram:1", "other", time.Minute); err != nil {
		t.Fatalf("after Forget the lease is still held: %v", err)
	}
	if err := d.Append(ctx, "telegram:1", store.Event{Seq: 1, Time: time.Now(), Kind: store.KindMessage, Text: "anew"}); err != nil {
		t.Fatalf("a forgotten thread doesn't begin anew: %v", err)
	}
	if es, err := d.Read(ctx, "telegram:2", 1); err != nil || len(es) != 3 {
		t.Fatalf("another thread lost events: %d, %v", len(es), err)
	}
	if err := d.Forget(ctx, "telegram:3"); err != nil {
		t.Fatalf("forgetting a thread with nothing: %v", err)
	}
}
