package harness_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"google.golang.org/api/option"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/gcs"
	"github.com/lnk-dev/link/store/log"
)

// gcsDrivers starts a fake Cloud Storage server (fake-gcs-server, in
// process on 127.0.0.1) and gives the Drivers of a harness keeping new
// conversations there: log, compact and gcs, each harness's gcs Driver on
// a client of its own.
func gcsDrivers(t *testing.T) func(p store.Paths) (map[string]store.Conversations, error) {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1"})
	if err != nil {
		t.Fatalf("start fake-gcs-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "lnk-test"})
	return func(p store.Paths) (map[string]store.Conversations, error) {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		c, err := storage.NewClient(context.Background(),
			option.WithEndpoint(srv.URL()+"/storage/v1/"),
			option.WithHTTPClient(&http.Client{Transport: tr}),
			option.WithoutAuthentication())
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { c.Close() })
		return map[string]store.Conversations{
			log.Name:     log.Open(p.Chats()),
			compact.Name: compact.Open(p.Chats()),
			"gcs":        gcs.Open(c, "lnk-test", "agents/"+p.Agent+"/chats"),
		}, nil
	}
}

// offered are the names of the tools the model was offered in thread's
// last request.
func (r *rig) offered(thread string) []string {
	r.T.Helper()
	reqs := r.Requests(thread)
	if len(reqs) == 0 {
		r.T.Fatalf("no request in %s", thread)
	}
	var out []string
	for _, tl := range reqs[len(reqs)-1].Tools {
		out = append(out, tl.Name)
	}
	return out
}

// A subagent's conversation kept in Cloud Storage keeps its narrowed
// tools there, beside its events, not on the machine: with the agent's
// chats folder emptied (a sleep's fresh disk) and a new harness, the next
// message is offered only the narrowed tools, and a later list narrows
// them again and never widens them. A narrowing its folder kept before
// (a conversation converted since) goes into the bucket's.
func TestToolsKeptOffMachine(t *testing.T) {
	drivers := gcsDrivers(t)
	onGCS := func(s *harness.Settings) { s.Conversations = "gcs" }
	r := newRig(t, func(c *harness.Config) { c.Drivers = drivers })
	r.SetSettings(onGCS)
	const thread = "link:task-1"
	r.Model.Push(model.Response{Text: "one"}, model.Response{Text: "two"})
	if _, _, err := r.Say(thread, "first", json.RawMessage(`{"link":{"tools":["memory__search","web__fetch","run__start"]}}`)); err != nil {
		t.Fatal(err)
	}
	if got, want := r.offered(thread), []string{"memory__search", "web__fetch"}; !slices.Equal(got, want) {
		t.Fatalf("first message offered %v, want %v", got, want)
	}
	p, err := store.For(r.Home, testAgent)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := p.Conversation(thread)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, folder.Tools)); !os.IsNotExist(err) {
		t.Fatalf("tools.json on the machine: %v, want none", err)
	}
	// An older narrowing kept in the folder narrows the bucket's.
	if _, err := r.FolderFiles().NarrowTools(t.Context(), thread, &[]string{"memory__search", "web__fetch", "memory__write"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.FolderFiles().NarrowTools(t.Context(), thread, &[]string{"web__fetch", "run__start"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Say(thread, "second", nil); err != nil {
		t.Fatal(err)
	}
	if got, want := r.offered(thread), []string{"web__fetch"}; !slices.Equal(got, want) {
		t.Fatalf("second message offered %v, want %v", got, want)
	}
	r.Close()

	// The machine sleeps and wakes with its disk emptied.
	if err := os.RemoveAll(p.Chats()); err != nil {
		t.Fatal(err)
	}
	woken := newRig(t, func(c *harness.Config) { c.Home = r.Home; c.Drivers = drivers })
	woken.Home = r.Home
	woken.SetSettings(onGCS)
	woken.Model.Push(model.Response{Text: "three"}, model.Response{Text: "four"})
	if _, _, err := woken.Say(thread, "after the sleep", nil); err != nil {
		t.Fatal(err)
	}
	if got, want := woken.offered(thread), []string{"web__fetch"}; !slices.Equal(got, want) {
		t.Fatalf("after the sleep offered %v, want %v", got, want)
	}
	if msgs := woken.Requests(thread)[0].Messages; len(msgs) < 3 {
		t.Fatalf("after the sleep the model saw %d messages, want the conversation's from the bucket", len(msgs))
	}
	if _, _, err := woken.Say(thread, "wider", json.RawMessage(`{"link":{"tools":["memory__search","memory__write","web__fetch"]}}`)); err != nil {
		t.Fatal(err)
	}
	if got, want := woken.offered(thread), []string{"web__fetch"}; !slices.Equal(got, want) {
		t.Fatalf("a wider list offered %v, want %v", got, want)
	}
}
