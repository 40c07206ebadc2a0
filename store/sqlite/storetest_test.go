package sqlite

import (
	"context"
	"testing"

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
