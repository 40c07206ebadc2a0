package convert_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/convert"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/log"
)

// A conversation's narrowed tools go with it into a bucket, which keeps
// them beside its events, and out again into its folder, never wider:
// narrowed further in the bucket, converted to a log, its folder's
// tools.json is the bucket's narrowing.
func TestConvertCarriesTools(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	o := gcsOpeners(t)
	th := worldThreads[0] // narrowed in its folder by newWorld
	want := *w.tools[th]
	if _, err := convert.Agent(ctx, w.p, "gcs", o, nil); err != nil {
		t.Fatalf("convert to gcs: %v", err)
	}
	d, err := o["gcs"](w.p.Chats())
	if err != nil {
		t.Fatal(err)
	}
	tk := d.(store.ToolsKeeper)
	got, err := tk.ReadTools(ctx, th)
	if err != nil || got == nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("the bucket keeps %v, %v; want %v", got, err, want)
	}
	if got, err := tk.ReadTools(ctx, worldThreads[1]); err != nil || got != nil {
		t.Fatalf("a conversation never narrowed has %v, %v in the bucket; want none", got, err)
	}
	if _, err := tk.NarrowTools(ctx, th, &[]string{want[1]}); err != nil {
		t.Fatal(err)
	}
	if _, err := convert.Agent(ctx, w.p, log.Name, o, nil); err != nil {
		t.Fatalf("convert to log: %v", err)
	}
	f := &folder.Files{Paths: w.p}
	if got, err := f.ReadTools(ctx, th); err != nil || got == nil || !reflect.DeepEqual(*got, []string{want[1]}) {
		t.Fatalf("the folder keeps %v, %v; want [%s]", got, err, want[1])
	}
}
