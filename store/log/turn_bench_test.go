//go:build unix

package log_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// BenchmarkTurn is the log's part of a warm turn, as the harness calls
// it: the lease taken, the events read since the last turn, the message
// and its answer appended (each synced), the lease let go, and the events
// read again. The conversations' folders are as deep as an agent's home
// puts them. Short turns go to conversations of 40 to 72 events (under
// a block, as a benchmark's are), Long to one of 10k events and more (as
// a chat's become), Paired the short ones with the lease taken with the
// read and let go with the look (store.LeaseReader), as the harness makes
// them. It reports the CPU a turn costs (cpu-us/op, user and
// system), steadier than its time on a shared machine. Unsynced is the
// same turns with the appends' flushes left out: the CPU of the calls
// around them, which the flushes' own would drown.
func BenchmarkTurn(b *testing.B) {
	for _, synced := range []bool{true, false} {
		name := map[bool]string{true: "Synced", false: "Unsynced"}[synced]
		for _, size := range []struct {
			name     string
			events   int
			turnsPer int
			paired   bool
		}{{"Short", 40, 16, false}, {"Long", 10_000, 0, false}, {"Paired", 40, 16, true}} {
			b.Run(name+"/"+size.name, func(b *testing.B) {
				if !synced {
					log.NoSyncs(b)
				}
				benchTurn(b, size.events, size.turnsPer, size.paired)
			})
		}
	}
}

// benchTurn runs b.N turns, turnsPer in each conversation (0: all in
// one), each conversation begun with events; paired, through LeaseRead
// and ReleaseRead.
func benchTurn(b *testing.B, events, turnsPer int, paired bool) {
	ctx := context.Background()
	chats := filepath.Join(b.TempDir(), "002", "agents", "main", "chats")
	d := log.Open(chats)
	convs := 1
	if turnsPer > 0 {
		convs = (b.N + turnsPer - 1) / turnsPer
	}
	var begun []byte
	for _, e := range storetest.BenchEvents(events) {
		line, err := store.MarshalLine(e)
		if err != nil {
			b.Fatal(err)
		}
		begun = append(begun, line...)
	}
	for i := range convs {
		thread := "link:at-once-" + strconv.Itoa(i)
		dir, err := d.Folder(thread)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, log.EventsFile), begun, 0o600); err != nil {
			b.Fatal(err)
		}
		// Its lease.json made, as by the turns before.
		if _, err := d.Lease(ctx, thread, "link-harness-1", time.Minute); err != nil {
			b.Fatal(err)
		}
		if err := d.Release(ctx, thread, "link-harness-1"); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC() // the setup's garbage not collected in the turns' time
	cpu0 := cpuTime()
	b.ResetTimer()
	seq := int64(events)
	for i := range b.N {
		thread := "link:at-once-0"
		if turnsPer > 0 {
			thread = "link:at-once-" + strconv.Itoa(i/turnsPer)
			if i%turnsPer == 0 {
				seq = int64(events)
			}
		}
		var (
			es  []store.Event
			err error
		)
		if paired {
			_, es, err = d.LeaseRead(ctx, thread, "link-harness-1", time.Minute, seq)
		} else if _, err = d.Lease(ctx, thread, "link-harness-1", time.Minute); err == nil {
			es, err = d.Read(ctx, thread, seq)
		}
		if err != nil || len(es) != 1 {
			b.Fatalf("read %d events, %v", len(es), err)
		}
		for range 2 {
			seq++
			if err := d.Append(ctx, thread, storetest.BenchEvent(seq)); err != nil {
				b.Fatal(err)
			}
		}
		if paired {
			es, err = d.ReleaseRead(ctx, thread, "link-harness-1", seq+1)
		} else if err = d.Release(ctx, thread, "link-harness-1"); err == nil {
			es, err = d.Read(ctx, thread, seq+1)
		}
		if err != nil || len(es) != 0 {
			b.Fatalf("read %d events after the last, %v", len(es), err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
