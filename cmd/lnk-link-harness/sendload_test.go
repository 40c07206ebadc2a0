package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
)

// sendLoad is a load of messages sent by goroutines of their own, each on
// a thread of its own, until stopped, as bridges send them through a
// process's restarts. A dial refused sent nothing (the proof comes
// first), so it is made again, as a bridge does; any other failure, or an
// answer that doesn't echo its message, is a message lost.
type sendLoad struct {
	answered, lost, redialed atomic.Int64
	more                     chan struct{} // a message answered

	mu      sync.Mutex
	lostWhy []string

	done chan struct{}
	wg   sync.WaitGroup
}

// startLoad starts n senders: sender g sends to agents[g%len(agents)] on
// thread telegram:<base+g>.
func startLoad(ctx context.Context, agents []*testAgent, n, base int) *sendLoad {
	l := &sendLoad{more: make(chan struct{}, 1), done: make(chan struct{})}
	for g := range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.send(ctx, agents[g%len(agents)], "telegram:"+strconv.Itoa(base+g), g)
		}()
	}
	return l
}

// send sends sender g's messages to a on thread until the load stops.
func (l *sendLoad) send(ctx context.Context, a *testAgent, thread string, g int) {
	for i := 0; ; i++ {
		select {
		case <-l.done:
			return
		default:
		}
		text := "message " + strconv.Itoa(g) + "." + strconv.Itoa(i)
		got, sent, err := sendOnce(ctx, a, thread, text)
		switch {
		case !sent:
			// Nothing was sent: dial again a little later, as a bridge
			// does, unless the load stopped meanwhile.
			l.redialed.Add(1)
			select {
			case <-l.done:
				return
			case <-ctx.Done():
				return
			case <-time.After(2 * time.Millisecond):
			}
			i--
		case err != nil || !strings.Contains(got, text):
			l.lost.Add(1)
			l.mu.Lock()
			l.lostWhy = append(l.lostWhy, text+": "+got+" "+errString(err))
			l.mu.Unlock()
		default:
			l.answered.Add(1)
			select {
			case l.more <- struct{}{}:
			default:
			}
		}
	}
}

// waitAnswered waits until n more messages are answered, and fails t
// naming what it waited for (what) if ctx ends first.
func (l *sendLoad) waitAnswered(t *testing.T, ctx context.Context, n int64, what string) {
	t.Helper()
	for want := l.answered.Load() + n; l.answered.Load() < want; {
		select {
		case <-l.more:
		case <-ctx.Done():
			t.Fatalf("%s: %d messages answered of %d, then none for %v", what, l.answered.Load(), want, ctx.Err())
		}
	}
}

// stop stops the senders, waits for them, and fails t if a message was
// lost.
func (l *sendLoad) stop(t *testing.T) {
	t.Helper()
	close(l.done)
	l.wg.Wait()
	if n := l.lost.Load(); n != 0 {
		t.Fatalf("%d messages lost: %q", n, l.lostWhy)
	}
}

// sendOnce sends one message to a; sent says whether the message went
// (the dial, its proof and upgrade, succeeded).
func sendOnce(ctx context.Context, a *testAgent, thread, text string) (got string, sent bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var b strings.Builder
	c, err := client(ctx, a.url, a.key, a.line.Name, "", &b)
	if err != nil {
		var de *endpoint.DialError
		return "", !errors.As(err, &de), err
	}
	defer c.Close()
	if err := c.Resume(ctx, thread); err != nil {
		return "", true, err
	}
	if _, err := c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil); err != nil {
		return "", true, err
	}
	c.Close()
	return b.String(), true, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
