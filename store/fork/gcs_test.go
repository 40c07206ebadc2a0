package fork_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"google.golang.org/api/option"

	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/fork"
	"github.com/lnk-dev/link/store/gcs"
	"github.com/lnk-dev/link/store/internal/fixture"
	"github.com/lnk-dev/link/store/router"
)

// A conversation kept in a bucket keeps the tools it was narrowed to in
// the bucket too (gcs's tools object), not in its folder: its fork is
// narrowed the same, in the bucket, so the fork never has every tool.
func TestForkGCSTools(t *testing.T) {
	ctx := context.Background()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "chats"})
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	client, err := storage.NewClient(ctx, option.WithEndpoint(srv.URL()+"/storage/v1/"),
		option.WithHTTPClient(&http.Client{Transport: tr}), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })

	p := fixture.Agent(t)
	ds := fixture.Drivers(t, p)
	d := gcs.Open(client, "chats", "agents/main/chats")
	ds["gcs"] = d
	r, err := router.New(p, "gcs", ds)
	if err != nil {
		t.Fatal(err)
	}
	es := fixture.Conversation(6, "a")
	fixture.AppendAll(t, r, "telegram:42", es)
	tools := &[]string{"memory__search", "file__read"}
	if _, err := d.NarrowTools(ctx, "telegram:42", tools); err != nil {
		t.Fatal(err)
	}
	if err := fork.Thread(ctx, p, r, d, "telegram:42", "link:edit", 13); err != nil {
		t.Fatal(err)
	}
	fixture.SameLines(t, "fork", fixture.ReadAll(t, r, "link:edit"), es[:12])
	got, err := d.ReadTools(ctx, "link:edit")
	if err != nil || !reflect.DeepEqual(got, tools) {
		t.Fatalf("the fork's tools in the bucket: %v, %v; want %v", got, err, *tools)
	}
	// The folder's, which the harness narrows the bucket's by, say the same.
	f := &folder.Files{Paths: p}
	if got, err := f.ReadTools(ctx, "link:edit"); err != nil || !reflect.DeepEqual(got, tools) {
		t.Fatalf("the fork's tools in its folder: %v, %v; want %v", got, err, *tools)
	}
}
