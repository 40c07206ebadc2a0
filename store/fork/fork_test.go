package fork_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/fork"
	"github.com/lnk-dev/link/store/internal/fixture"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/sqlite"
)

func TestFork(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{log.Name, compact.Name, sqlite.Name} {
		t.Run(kind, func(t *testing.T) {
			p := fixture.Agent(t)
			r := fixture.Router(t, p, kind)
			es := fixture.Conversation(6, "a")
			fixture.AppendAll(t, r, "telegram:42", es)
			f := &folder.Files{Paths: p}
			tools := &[]string{"memory__search", "file__read"}
			if _, err := f.NarrowTools(ctx, "telegram:42", tools); err != nil {
				t.Fatal(err)
			}
			// #13 is the owner's fourth question, after a summary and a
			// checkpoint: the whole prefix before it comes along.
			if es[12].Kind != store.KindMessage || es[12].From != "" {
				t.Fatalf("test data: #13 is %+v", es[12])
			}
			if err := fork.Thread(ctx, p, r, nil, "telegram:42", "link:edit", 13); err != nil {
				t.Fatal(err)
			}
			fixture.SameLines(t, "fork", fixture.ReadAll(t, r, "link:edit"), es[:12])
			got, err := f.ReadTools(ctx, "link:edit")
			if err != nil || !reflect.DeepEqual(got, tools) {
				t.Fatalf("fork's tools: %v, %v", got, err)
			}
			// The source is as it was, and the fork goes on its own way.
			fixture.SameLines(t, "source", fixture.ReadAll(t, r, "telegram:42"), es)
			next := es[12]
			next.Text = "the edited question"
			fixture.AppendAll(t, r, "link:edit", []store.Event{next})
		})
	}
}

func TestForkRefuses(t *testing.T) {
	ctx := context.Background()
	p := fixture.Agent(t)
	r := fixture.Router(t, p, log.Name)
	es := fixture.Conversation(3, "a")
	fixture.AppendAll(t, r, "telegram:42", es)
	fixture.AppendAll(t, r, "telegram:43", es[:2])
	for _, c := range []struct {
		name   string
		to     string
		before int64
		want   error
	}{
		{"an answer", "link:a", 2, fork.ErrNotOwnerMessage},
		{"a tool's answer", "link:a", 3, fork.ErrNotOwnerMessage},
		{"a schedule's message", "link:a", 9, fork.ErrNotOwnerMessage},
		{"past the end", "link:a", 99, fork.ErrNotOwnerMessage},
		{"none", "link:a", 0, fork.ErrNotOwnerMessage},
		{"a thread begun", "telegram:43", 5, fork.ErrBegun},
		{"itself", "telegram:42", 5, fork.ErrBegun},
	} {
		if err := fork.Thread(ctx, p, r, nil, "telegram:42", c.to, c.before); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := os.Stat(p.Chats() + "/link-a"); !os.IsNotExist(err) {
		t.Fatalf("a refused fork left a folder: %v", err)
	}
	if err := fork.Thread(ctx, p, r, nil, "telegram:42", "../x", 5); err == nil {
		t.Fatal("a bad new thread: no error")
	}
}
