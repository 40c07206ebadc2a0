package convert_test

import (
	"context"
	"net/http"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"google.golang.org/api/option"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/convert"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/gcs"
	"github.com/lnk-dev/link/store/internal/fixture"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/sqlite"
)

// gcsOpeners are openers with gcs among them, on a fake-gcs-server on
// loopback.
func gcsOpeners(t *testing.T) map[string]driver.Opener {
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "chats"})
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	client, err := storage.NewClient(context.Background(), option.WithEndpoint(srv.URL()+"/storage/v1/"),
		option.WithHTTPClient(&http.Client{Transport: tr}), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	o := fixture.Openers(t)
	o["gcs"] = func(string) (store.Conversations, error) { return gcs.Open(client, "chats", "agents/main/chats"), nil }
	return o
}

// Into a bucket and out again, and back into it: a driver that can't
// forget keeps the old way's objects, which are the events' first and
// are kept, the rest appended after them.
func TestConvertGCS(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	o := gcsOpeners(t)
	for _, to := range []string{"gcs", log.Name, sqlite.Name, "gcs", compact.Name} {
		if _, err := convert.Agent(ctx, w.p, to, o, nil); err != nil {
			t.Fatalf("convert to %s: %v", to, err)
		}
		w.checkWith(t, o, to)
		if to == log.Name {
			// The conversation goes on as a log before it goes back.
			r := fixture.Router(t, w.p, log.Name)
			th := worldThreads[0]
			more := fixture.Conversation(len(w.events[th])/4+1, th)
			fixture.AppendAll(t, r, th, more[len(w.events[th]):])
			w.events[th] = more
		}
	}
}
