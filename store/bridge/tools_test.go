package bridge_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"google.golang.org/api/option"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
	"github.com/lnk-dev/link/store/gcs"
)

// gcsServer starts a fake Cloud Storage server
// (fake-gcs-server, in process on 127.0.0.1): open opens a gcs Driver on
// it with a client of its own.
func gcsServer(t *testing.T) (open func() *gcs.Driver) {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1"})
	if err != nil {
		t.Fatalf("start fake-gcs-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "lnk-test"})
	return func() *gcs.Driver {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		c, err := storage.NewClient(context.Background(),
			option.WithEndpoint(srv.URL()+"/storage/v1/"),
			option.WithHTTPClient(&http.Client{Transport: tr}),
			option.WithoutAuthentication())
		if err != nil {
			t.Fatalf("storage client: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return gcs.Open(c, "lnk-test", "agents/main/chats")
	}
}

// serveStore serves d behind a bridge on a unix socket and dials it.
func serveStore(t *testing.T, d store.Conversations) *bridge.Client {
	t.Helper()
	srv, err := bridge.NewServer(bridge.ServerConfig{Store: d, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	c, err := bridge.Dial(context.Background(), listen(t, "unix", srv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func names(l *[]string) []string {
	if l == nil {
		return nil
	}
	return *l
}

// A conversation's tools narrowed through the bridge are kept by the
// served driver, in the bucket: another Driver reads them there; a later
// list narrows them and never widens them; eight narrowing at once
// through the bridge end with the tools in every list.
func TestToolsThroughBridge(t *testing.T) {
	ctx := context.Background()
	open := gcsServer(t)
	c := serveStore(t, open())
	if got, err := c.ReadTools(ctx, "link:task-1"); err != nil || got != nil {
		t.Fatalf("tools of a conversation never narrowed: %v, %v; want every tool", names(got), err)
	}
	for _, s := range []struct{ said, want []string }{
		{[]string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{[]string{"c", "b", "d"}, []string{"b", "c"}},
		{[]string{"a", "b", "c", "d"}, []string{"b", "c"}},
	} {
		got, err := c.NarrowTools(ctx, "link:task-1", &s.said)
		if err != nil {
			t.Fatalf("narrow by %v: %v", s.said, err)
		}
		if !slices.Equal(names(got), s.want) {
			t.Fatalf("narrowed by %v to %v, want %v", s.said, names(got), s.want)
		}
	}
	if got, err := open().ReadTools(ctx, "link:task-1"); err != nil || !slices.Equal(names(got), []string{"b", "c"}) {
		t.Fatalf("the bucket keeps %v, %v; want [b c]", names(got), err)
	}
	if _, err := c.NarrowTools(ctx, "link:task-1", &[]string{"b", "not a name"}); err == nil {
		t.Fatal("a list with a bad name was taken")
	}

	all := []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			said := slices.Delete(slices.Clone(all), i, i+1)
			_, errs[i] = c.NarrowTools(ctx, "default", &said)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got, err := c.ReadTools(ctx, "default"); err != nil || !slices.Equal(names(got), []string{"t8", "t9"}) {
		t.Fatalf("after eight at once: %v, %v; want [t8 t9]", names(got), err)
	}
}

// A served driver that keeps no tools (log's) answers the tools calls
// with store.ErrToolsUnsupported, for the caller to keep them in the folder.
func TestToolsUnsupported(t *testing.T) {
	ctx := context.Background()
	s := serve(t, "unix")
	if _, err := s.client.ReadTools(ctx, "default"); !errors.Is(err, store.ErrToolsUnsupported) {
		t.Fatalf("read tools from log's bridge: %v, want ErrToolsUnsupported", err)
	}
	if _, err := s.client.NarrowTools(ctx, "default", &[]string{"a"}); !errors.Is(err, store.ErrToolsUnsupported) {
		t.Fatalf("narrow tools with log's bridge: %v, want ErrToolsUnsupported", err)
	}
}
