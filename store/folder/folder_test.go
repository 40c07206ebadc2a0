package folder_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/internal/fixture"
)

func TestNarrowTools(t *testing.T) {
	ctx := context.Background()
	f := &folder.Files{Paths: fixture.Agent(t)}
	th := "telegram:42"
	if got, err := f.ReadTools(ctx, th); got != nil || err != nil {
		t.Fatalf("tools never narrowed: %v, %v; want nil (every tool)", got, err)
	}
	steps := []struct {
		said *[]string
		want *[]string
	}{
		{nil, nil},
		{&[]string{"memory__search", "run__command", "file__read"}, &[]string{"memory__search", "run__command", "file__read"}},
		{nil, &[]string{"memory__search", "run__command", "file__read"}},
		{&[]string{"file__read", "memory__search", "web__fetch"}, &[]string{"memory__search", "file__read"}}, // never wider
		{&[]string{}, &[]string{}},
		{&[]string{"memory__search"}, &[]string{}},
	}
	for i, s := range steps {
		got, err := f.NarrowTools(ctx, th, s.said)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, s.want) {
			t.Fatalf("step %d: %v, want %v", i, got, s.want)
		}
		// What's read is what was kept: another process sees the same.
		again, err := (&folder.Files{Paths: f.Paths}).ReadTools(ctx, th)
		if err != nil || !reflect.DeepEqual(again, s.want) {
			t.Fatalf("step %d read again: %v, %v", i, again, err)
		}
	}
	path, _ := f.Paths.ConversationFile(th, folder.Tools)
	if err := os.WriteFile(path, []byte(`["../x"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadTools(ctx, th); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("a bad name: %v, want ErrCorrupt", err)
	}
	if _, err := f.ReadTools(ctx, "../x"); err == nil {
		t.Fatal("a bad thread: no error")
	}
}

func TestEnd(t *testing.T) {
	ctx := context.Background()
	f := &folder.Files{Paths: fixture.Agent(t)}
	th := "link:notes"
	if _, asked, err := f.EndAsked(ctx, th); asked || err != nil {
		t.Fatalf("asked before any: %v, %v", asked, err)
	}
	if err := f.ClearEnd(ctx, th); err != nil {
		t.Fatalf("clear none: %v", err)
	}
	at := fixture.T0.Add(time.Hour)
	if err := f.AskEnd(ctx, th, at); err != nil {
		t.Fatal(err)
	}
	got, asked, err := f.EndAsked(ctx, th)
	if !asked || err != nil || !got.Equal(at) {
		t.Fatalf("asked: %v at %v, %v", asked, got, err)
	}
	if err := f.ClearEnd(ctx, th); err != nil {
		t.Fatal(err)
	}
	if _, asked, _ := f.EndAsked(ctx, th); asked {
		t.Fatal("still asked after clearing")
	}
}
