package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/storetest"
)

func TestDriver(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Conversations { return open(t, t.TempDir()) })
}

// BenchmarkDriver measures appends, each its own transaction and durable
// before the next, and reading the latest 32 events of conversations of
// 10k and 100k events, which fill builds in one transaction.
func BenchmarkDriver(b *testing.B) {
	storetest.Benchmarks{
		Open: func(tb testing.TB) store.Conversations {
			d, err := Open(tb.TempDir())
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { d.Close() })
			return d
		},
		Fill: fill,
	}.Run(b)
}

// fill writes events as thread's conversation in one transaction, each
// row as Append writes it.
func fill(tb testing.TB, c store.Conversations, thread string, events []store.Event) {
	d := c.(*Driver)
	ctx := context.Background()
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, queryInsert)
	if err != nil {
		tb.Fatal(err)
	}
	defer stmt.Close()
	for _, e := range events {
		body, err := store.MarshalLine(e)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := stmt.ExecContext(ctx, thread, e.Seq, body); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkReadBesideAppends reads a conversation's latest 32 events while
// another conversation is appended to without pause, as an agent answering
// two at once does: through the driver's pools (a writer and readers) and
// through its one writing connection alone, the design of a driver that
// never reopens a connection, whose reads wait out each append's sync.
func BenchmarkReadBesideAppends(b *testing.B) {
	for _, one := range []bool{false, true} {
		name := "pools"
		if one {
			name = "one connection"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			d, err := Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			fill(b, d, "default", storetest.BenchEvents(1000))
			if one {
				d.r = d.w
			}
			stop := make(chan struct{})
			done := make(chan error, 1)
			var appended int64
			go func() {
				for seq := int64(1); ; seq++ {
					select {
					case <-stop:
						done <- nil
						return
					default:
					}
					if err := d.Append(ctx, "telegram:2", storetest.BenchEvent(seq)); err != nil {
						done <- err
						return
					}
					appended = seq
				}
			}()
			start := time.Now()
			for b.Loop() {
				if es, err := d.Latest(ctx, "default", storetest.LatestN); err != nil || len(es) != storetest.LatestN {
					b.Fatalf("latest: %d events, %v", len(es), err)
				}
			}
			close(stop)
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(appended)/time.Since(start).Seconds(), "appends/s")
		})
	}
}
