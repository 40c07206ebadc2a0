package convert_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/convert"
	"github.com/lnk-dev/link/store/internal/fixture"
	"github.com/lnk-dev/link/store/log"
)

// A conversation whose folder is a symbolic link (to another agent's
// conversation) is refused and named in Links, never followed: the link
// is left as it is, the folder it points to untouched, and the agent's
// other conversations converted.
func TestConvertLinkRefused(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	other := fixture.Agent(t)
	fixture.AppendAll(t, fixture.Router(t, other, log.Name), "telegram:9", fixture.Conversation(2, "theirs"))
	target, _ := other.Conversation("telegram:9")
	link, _ := w.p.Conversation("telegram:9")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	before := tree(t, other.Chats())

	res, err := convert.Agent(ctx, w.p, compact.Name, fixture.Openers(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Links, []string{"telegram:9"}) {
		t.Errorf("links: %v, want the linked conversation", res.Links)
	}
	if contains(res.Converted, "telegram:9") {
		t.Errorf("the linked conversation converted: %v", res.Converted)
	}
	w.check(t, compact.Name)
	if got, err := os.Readlink(link); err != nil || got != target {
		t.Errorf("the link is %q, %v; want it as it was", got, err)
	}
	if after := tree(t, other.Chats()); !reflect.DeepEqual(after, before) {
		t.Errorf("the other agent's conversations were\n%v\nare\n%v", before, after)
	}
	if left := w.leftovers(t); len(left) != 0 {
		t.Errorf("convert left %v", left)
	}
}

// tree is every file under dir with its size and time.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var l []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		l = append(l, fmt.Sprintf("%s %v %d %v", path, fi.Mode(), fi.Size(), fi.ModTime()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
