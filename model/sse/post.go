package sse

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Request is one call to a provider: where it goes, its headers, and its
// JSON body, opened again from its start for each try.
type Request struct {
	URL    string
	Header http.Header
	// Size is the body's length; Body gives a reader of it from its start.
	Size int64
	Body func() io.Reader
	// Retries is how many times a call refused as retryable (see
	// Retryable), or whose connection failed before an answer, is sent
	// again, Backoff apart; 0 sends it once.
	Retries int
	// Sleep waits d or until ctx ends (tests); nil waits on a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Post sends r and returns the response whose status says how it went:
// a success, or the last refusal, its body unread, once no retry is left.
// An error is a connection's or the context's after the last try.
func Post(ctx context.Context, hc *http.Client, r Request) (*http.Response, error) {
	sleep := r.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	for try := 0; ; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, r.Body())
		if err != nil {
			return nil, err
		}
		req.Header = r.Header.Clone()
		req.ContentLength = r.Size
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(r.Body()), nil }
		res, err := hc.Do(req)
		last := try >= r.Retries || ctx.Err() != nil
		if err == nil && (last || !Retryable(res)) {
			return res, nil
		}
		if err != nil && last {
			return nil, err
		}
		wait := Backoff(res, try)
		if res != nil {
			io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
			res.Body.Close()
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// Retryable says whether a refusal may go another way if sent again: as
// the server says in x-should-retry, else a timeout (408), a conflict
// (409), a rate limit (429) or the server's own failure (5xx).
func Retryable(res *http.Response) bool {
	switch res.Header.Get("X-Should-Retry") {
	case "true":
		return true
	case "false":
		return false
	}
	s := res.StatusCode
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}

// Backoff is how long to wait before try+1: what the refusal's
// Retry-After-Ms or Retry-After (seconds) says, up to a minute, else half
// a second doubling at each try up to 8 s, less up to a quarter at random.
func Backoff(res *http.Response, try int) time.Duration {
	if res != nil {
		for _, h := range []struct {
			name string
			unit time.Duration
		}{{"Retry-After-Ms", time.Millisecond}, {"Retry-After", time.Second}} {
			if v, err := strconv.ParseFloat(res.Header.Get(h.name), 64); err == nil && v >= 0 && v*float64(h.unit) <= float64(time.Minute) {
				return time.Duration(v * float64(h.unit))
			}
		}
	}
	d := min(8*time.Second, time.Duration(float64(500*time.Millisecond)*float64(uint64(1)<<min(try, 10))))
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
