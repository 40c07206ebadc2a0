package gcs

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"google.golang.org/api/option"
)

// testBucket is the bucket every test's fake server has.
const testBucket = "lnk-test"

// testPrefix is the agent's prefix the tests keep conversations under.
const testPrefix = "agents/main/chats"

// newFake starts fake-gcs-server on 127.0.0.1, over plain HTTP, with
// testBucket in it, stopped when t ends. Its public host is 127.0.0.1,
// so the client's XML reads (its default) reach it as its JSON calls do.
func newFake(t testing.TB) *fakestorage.Server {
	t.Helper()
	return startFake(t, "")
}

// newFakeOnDisk is newFake keeping its objects in files under a folder
// of t's, a file per object, instead of in memory: its memory backend
// keeps a bucket as one list it searches end to end for every object, so
// a call to it costs in proportion to the bucket, where a file is found
// by its name.
func newFakeOnDisk(t testing.TB) *fakestorage.Server {
	t.Helper()
	return startFake(t, t.TempDir())
}

// startFake starts a fake server, keeping its objects under root, or in
// memory when root is "".
func startFake(t testing.TB, root string) *fakestorage.Server {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Scheme:      "http",
		Host:        "127.0.0.1",
		PublicHost:  "127.0.0.1",
		StorageRoot: root,
	})
	if err != nil {
		t.Fatalf("start fake-gcs-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: testBucket})
	return srv
}

// newClient is a client of srv whose requests go through rt (a fresh
// transport when nil), closed when t ends.
func newClient(t testing.TB, srv *fakestorage.Server, rt http.RoundTripper) *storage.Client {
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	// As the client's own transport does: a Driver reads up to fetchers
	// objects at once, and with Go's default of 2 idle connections a host
	// the rest would each dial anew.
	base.MaxIdleConnsPerHost = 100
	t.Cleanup(base.CloseIdleConnections)
	if rt == nil {
		rt = base
	}
	if f, ok := rt.(*faults); ok && f.base == nil {
		f.base = base
	}
	c, err := storage.NewClient(context.Background(),
		option.WithEndpoint(srv.URL()+"/storage/v1/"),
		option.WithHTTPClient(&http.Client{Transport: rt}),
		option.WithoutAuthentication(),
	)
	if err != nil {
		t.Fatalf("storage client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// openDriver opens a Driver on a client of its own of srv.
func openDriver(t testing.TB, srv *fakestorage.Server) *Driver {
	return Open(newClient(t, srv, nil), testBucket, testPrefix)
}

// fault is what faults does to a request it matches.
type fault int

const (
	// lostAnswer sends the request on, then drops the answer: the
	// connection reset after the body went.
	lostAnswer fault = iota + 1
	// lostRequest drops the request before it is sent, running before
	// first: the connection reset before the server saw anything.
	lostRequest
	// brokenAnswer sends the request on, then fails with an error the
	// client doesn't retry, so the write's caller sees it.
	brokenAnswer
)

// faults is an HTTP transport that passes requests to a real one, except
// the first that match, to which it does its fault once. It counts the
// matching requests it sees.
type faults struct {
	base   http.RoundTripper
	match  func(*http.Request) bool
	fault  fault
	before func() // run before a lostRequest fails

	mu      sync.Mutex
	done    bool
	matched int
}

// uploadOf matches an upload of the object name.
func uploadOf(name string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/upload/") && r.URL.Query().Get("name") == name
	}
}

// errReset is the error of a connection reset by its peer.
var errReset = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}

func (f *faults) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.match == nil || !f.match(r) {
		return f.base.RoundTrip(r)
	}
	f.mu.Lock()
	f.matched++
	act := !f.done
	f.done = true
	f.mu.Unlock()
	if !act {
		return f.base.RoundTrip(r)
	}
	switch f.fault {
	case lostRequest:
		if r.Body != nil {
			r.Body.Close()
		}
		if f.before != nil {
			f.before()
		}
		return nil, errReset
	case lostAnswer, brokenAnswer:
		resp, err := f.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if f.fault == brokenAnswer {
			return nil, errBroken
		}
		return nil, errReset
	}
	return f.base.RoundTrip(r)
}

// errBroken is an error the client's retry policy doesn't retry.
var errBroken = errors.New("answer broken off")

// count is how many matching requests f has seen.
func (f *faults) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.matched
}

// clock is a settable clock for leases.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// putObject writes body as the object name of srv's bucket, as someone
// other than a Driver could.
func putObject(t testing.TB, c *storage.Client, name string, body []byte) {
	t.Helper()
	w := c.Bucket(testBucket).Object(name).NewWriter(context.Background())
	if _, err := w.Write(body); err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
}

// getObject reads the object name of the bucket.
func getObject(t testing.TB, c *storage.Client, name string) []byte {
	t.Helper()
	r, err := c.Bucket(testBucket).Object(name).NewReader(context.Background())
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return b
}
