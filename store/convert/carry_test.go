package convert_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/convert"
	"github.com/lnk-dev/link/store/delivery"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/internal/fixture"
	"github.com/lnk-dev/link/store/log"
)

// An answer kept as the convert is about to put a conversation in place
// (its events already written the new way) goes with it: the folder's
// files are carried under the folder's own lock, the one every keeper of
// an answer takes, just before the old folder goes aside.
func TestConvertCarriesAnswerKeptMeanwhile(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	th := "telegram:42"
	fixture.AppendAll(t, fixture.Router(t, p, log.Name), th, fixture.Conversation(2, "a"))
	answers := &delivery.Answers{Paths: p}
	var id string
	job := &convert.Job{Paths: p, To: compact.Name, Drivers: fixture.Openers(t), Step: func(thread, step string) error {
		if step != convert.StepAside || id != "" {
			return nil
		}
		var err error
		id, err = answers.Keep(ctx, thread, "kept as the convert ran", time.Time{}, 0)
		return err
	}}
	if _, err := job.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if id == "" {
		t.Fatal("the convert never reached its aside step")
	}
	pending, err := answers.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].ID != id {
		t.Fatalf("pending after the convert: %+v; want the answer %s", pending, id)
	}
}

// An answers.json set aside because it didn't read is carried, as it is,
// for a person to look at.
func TestConvertCarriesAnswersSetAside(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	th := "telegram:42"
	fixture.AppendAll(t, fixture.Router(t, p, log.Name), th, fixture.Conversation(2, "a"))
	dir, _ := p.Conversation(th)
	aside := folder.AnswersAside + "20261130T091500.000000000Z"
	bad := []byte("[{\"id\": not json\n")
	if err := os.WriteFile(filepath.Join(dir, aside), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := convert.Agent(ctx, p, compact.Name, fixture.Openers(t), nil); err != nil {
		t.Fatal(err)
	}
	if kind, err := driver.Of(dir); kind != compact.Name || err != nil {
		t.Fatalf("kept %q (%v) after the convert", kind, err)
	}
	got, err := os.ReadFile(filepath.Join(dir, aside))
	if err != nil || !bytes.Equal(got, bad) {
		t.Fatalf("the answers set aside after the convert: %q, %v; want %q", got, err, bad)
	}
}
