package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/lnk-dev/link/acp"
)

// chatInterrupts takes Ctrl-C (SIGINT) for lnk agent chat itself: while
// an answer streams it stops that turn (session/cancel), and at the
// prompt it ends the chat, as it always did. The context returned ends
// only by SIGTERM, then, not by the interrupt main's context ends at;
// stop gives the signals back.
func chatInterrupts(parent context.Context) (ctx context.Context, intr <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	ctx, stopTerm := signal.NotifyContext(context.WithoutCancel(parent), syscall.SIGTERM)
	return ctx, ch, func() {
		signal.Stop(ch)
		stopTerm()
	}
}

// cancelOn sends session/cancel of thread on c when an interrupt comes,
// until the returned done is called, once the prompt is answered.
func cancelOn(ctx context.Context, c *acp.Client, thread string, intr <-chan os.Signal) (done func()) {
	if intr == nil {
		return func() {}
	}
	over := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-intr:
			c.Cancel(ctx, thread)
		case <-over:
		case <-ctx.Done():
		}
	}()
	return func() {
		close(over)
		<-finished
	}
}

// untilInterrupt is ctx, ended too by an interrupt on intr: Ctrl-C stops
// a wait for an answer that isn't streaming (a steered message's).
func untilInterrupt(ctx context.Context, intr <-chan os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if intr != nil {
		go func() {
			select {
			case <-intr:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}
