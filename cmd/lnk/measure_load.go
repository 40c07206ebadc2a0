package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
)

// measureTurnsPerThread is how many messages a warm conversation gets
// before the next begins, so each turn reads about as much.
const measureTurnsPerThread = 32

// timeMessage sends one message as a bridge does and times it: the
// connection's open (dial, proof, upgrade), its frames, the prompt
// answered, and the connection's close.
func timeMessage(ctx context.Context, a *agentConn, thread string, i int) (time.Duration, error) {
	start := time.Now()
	if err := sayText(ctx, a, thread, "message "+strconv.Itoa(i)); err != nil {
		return 0, fmt.Errorf("message %d: %w", i, err)
	}
	return time.Since(start), nil
}

// sayText sends text as a bridge does, on a connection of its own, and
// waits for its answer.
func sayText(ctx context.Context, a *agentConn, thread, text string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := a.dial(ctx, 0)
	if err != nil {
		return err
	}
	c := acp.NewClient(ctx, conn, nil)
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return err
	}
	if err := c.Resume(ctx, thread); err != nil {
		return err
	}
	if _, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil); err != nil {
		return err
	}
	return c.Close()
}

// percentiles are a series' p50 and p99.
type percentiles struct{ p50, p99 time.Duration }

// warmMessages times n messages to conversations already begun (each
// one's first message not timed), measureTurnsPerThread each, to each of
// conns in turn, and gives each one's percentiles; name keeps this run's
// threads apart from another's.
func warmMessages(ctx context.Context, conns []*agentConn, name string, n int) ([]percentiles, error) {
	times := make([][]time.Duration, len(conns))
	for i := 0; len(times[0]) < n; i++ {
		thread := "link:warm-" + name + "-" + strconv.Itoa(i/(measureTurnsPerThread+1))
		for k, a := range conns {
			d, err := timeMessage(ctx, a, thread, i)
			if err != nil {
				return nil, err
			}
			if i%(measureTurnsPerThread+1) != 0 {
				times[k] = append(times[k], d)
			}
		}
	}
	return eachPercentiles(times), nil
}

// coldMessages times n messages, each the first of its conversation, to
// each of conns in turn, and gives each one's percentiles.
func coldMessages(ctx context.Context, conns []*agentConn, name string, n int) ([]percentiles, error) {
	times := make([][]time.Duration, len(conns))
	for i := range n {
		for k, a := range conns {
			d, err := timeMessage(ctx, a, "link:cold-"+name+"-"+strconv.Itoa(i), i)
			if err != nil {
				return nil, err
			}
			times[k] = append(times[k], d)
		}
	}
	return eachPercentiles(times), nil
}

func eachPercentiles(times [][]time.Duration) []percentiles {
	out := make([]percentiles, len(times))
	for k, ts := range times {
		out[k] = percentilesOf(ts)
	}
	return out
}

func percentilesOf(times []time.Duration) percentiles {
	slices.Sort(times)
	return percentiles{nearestRank(times, 50), nearestRank(times, 99)}
}

// turnsPerSecond runs conc conversations at once, each sending its
// messages one after another, turns messages in all (at least 2 each),
// and gives the turns answered a second, and the CPU a timed turn cost
// the server whose process is pid (-1 where the system doesn't say). Each conversation is begun
// first, untimed, its first message answered (as
// BenchmarkMessagesAtOnce does): the timed turns are all warm at every
// concurrency, where otherwise a quarter of 64's would be a
// conversation's first (256 turns, 4 each) against one in 256 at 1, and
// the ratio of the two would weigh a cold message's cost, which the
// cold figure gives, rather than turns at once.
func turnsPerSecond(ctx context.Context, a *agentConn, name string, conc, turns, pid int) (float64, time.Duration, error) {
	each := max(2, turns/conc)
	thread := func(g int) string {
		return "link:conc-" + name + "-" + strconv.Itoa(conc) + "-" + strconv.Itoa(g)
	}
	errs := make([]error, conc)
	var wg sync.WaitGroup
	for g := range conc {
		wg.Go(func() {
			if _, err := timeMessage(ctx, a, thread(g), 0); err != nil {
				errs[g] = fmt.Errorf("its first message, untimed: %w", err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	cpu0, ok0 := processCPU(pid)
	began := time.Now()
	for g := range conc {
		wg.Go(func() {
			for i := range each {
				if _, err := timeMessage(ctx, a, thread(g), 1+i); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	cpu1, ok1 := processCPU(pid)
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	used := time.Duration(-1)
	if ok0 && ok1 {
		used = (cpu1 - cpu0) / time.Duration(conc*each)
	}
	return float64(conc*each) / elapsed.Seconds(), used, nil
}

// nearestRank is the pth percentile of sorted, by nearest rank.
func nearestRank(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, min(len(sorted)-1, i-1))]
}
