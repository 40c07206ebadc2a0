//go:build !unix

package harness_test

import (
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/lnk-dev/link/store"
)

// fill adds events to thread in agent's bucket through the fake's own
// process, an object at a time.
func (g gcsBench) fill(b *testing.B, agent, thread string, events []store.Event) {
	for _, e := range events {
		line, err := store.MarshalLine(e)
		if err != nil {
			b.Fatal(err)
		}
		g.srv.CreateObject(fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: agent, Name: gcsObject(b, thread, e.Seq), ContentType: "application/json"}, Content: line})
	}
}
