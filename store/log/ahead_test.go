package log_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// openAhead opens a driver on chats that makes folders ahead holding
// chat.md, closed (its folder being made waited for) with t.
func openAhead(t *testing.T, chats string) *log.Driver {
	t.Helper()
	d := log.Open(chats).MakeAhead("chat.md")
	if !d.MadeAhead() && runtime.GOOS == "linux" {
		t.Fatal("no folder made ahead on Linux")
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// The suite every driver passes, with folders made ahead.
func TestDriverMadeAhead(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Conversations { return openAhead(t, t.TempDir()) })
}

// TestMadeAhead: the first conversation begun makes its folder and has
// one made ahead as its lease is let go; the next takes that folder (the
// same one, its files in it, its lease written in the file made ahead)
// and has the next made as its lease goes; no thread is named after the
// folder made ahead.
func TestMadeAhead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("folders are made ahead on Linux")
	}
	ctx := context.Background()
	chats := t.TempDir()
	d := openAhead(t, chats)
	ahead := filepath.Join(chats, log.AheadFolder)
	if _, err := d.Lease(ctx, "telegram:1", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	d.WaitAhead()
	if _, err := os.Lstat(ahead); err == nil {
		t.Fatal("a folder made ahead while the first turn ran")
	}
	if err := d.Release(ctx, "telegram:1", "h"); err != nil {
		t.Fatal(err)
	}
	d.WaitAhead()
	made := stat(t, ahead)
	for _, name := range []string{log.EventsFile, log.LeaseFile, "chat.md"} {
		if _, err := os.Lstat(filepath.Join(ahead, name)); err != nil {
			t.Fatalf("the folder made ahead lacks %s: %v", name, err)
		}
	}
	lease := stat(t, filepath.Join(ahead, log.LeaseFile))

	if _, err := d.Lease(ctx, "telegram:2", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(chats, "telegram-2")
	if !os.SameFile(made, stat(t, dir)) {
		t.Fatal("the second conversation made its own folder, not the one made ahead")
	}
	if !os.SameFile(lease, stat(t, filepath.Join(dir, log.LeaseFile))) {
		t.Fatal("the lease wasn't written in the file made ahead")
	}
	if err := d.Append(ctx, "telegram:2", storetest.Event(1, "a")); err != nil {
		t.Fatal(err)
	}
	if es, err := d.Read(ctx, "telegram:2", 1); err != nil || len(es) != 1 {
		t.Fatalf("read %v, %v", es, err)
	}
	if kind, err := driver.Of(dir); kind != log.Name || err != nil {
		t.Fatalf("its folder is %q, %v: want the log's", kind, err)
	}
	d.WaitAhead()
	if _, err := os.Lstat(ahead); err == nil {
		t.Fatal("a folder made ahead while the turn that took the last ran")
	}
	if err := d.Release(ctx, "telegram:2", "h"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lease(ctx, "telegram:2", "other", time.Minute); err != nil {
		t.Fatalf("a lease let go isn't taken: %v", err)
	}
	d.WaitAhead()
	if again := stat(t, ahead); os.SameFile(again, made) {
		t.Fatal("no folder made ahead after it was taken")
	}
	entries, err := os.ReadDir(chats)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != ".ahead telegram-1 telegram-2" {
		t.Fatalf("the conversations folder holds %v", names)
	}
}

// TestTakeAhead: the folder made ahead is taken only where nothing is,
// and only when it is a folder.
func TestTakeAhead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("folders are made ahead on Linux")
	}
	chats := t.TempDir()
	ahead := filepath.Join(chats, log.AheadFolder)
	there := filepath.Join(chats, "telegram-1")
	for _, dir := range []string{ahead, there} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(there, log.EventsFile), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := log.TakeAhead(ahead, there); got != log.AheadInPlace {
		t.Fatalf("over a folder there: %d, want in place", got)
	}
	if b, err := os.ReadFile(filepath.Join(there, log.EventsFile)); err != nil || string(b) != "x" {
		t.Fatal("the folder there was replaced")
	}
	if got := log.TakeAhead(filepath.Join(chats, "none"), filepath.Join(chats, "telegram-2")); got != log.AheadNone {
		t.Fatalf("none to take: %d", got)
	}
	link := filepath.Join(chats, "link")
	if err := os.Symlink(there, link); err != nil {
		t.Fatal(err)
	}
	if got := log.TakeAhead(link, filepath.Join(chats, "telegram-3")); got != log.AheadNone {
		t.Fatalf("a link taken: %d", got)
	}
	if got := log.TakeAhead(ahead, filepath.Join(chats, "telegram-4")); got != log.AheadTaken {
		t.Fatalf("taken: %d", got)
	}
}

// TestMadeAheadAtOnce: conversations begun at once, in two drivers on one
// folder as two processes would, each get a folder of their own and
// keep every event; one folder made ahead is left at most.
func TestMadeAheadAtOnce(t *testing.T) {
	ctx := context.Background()
	chats := t.TempDir()
	ds := []*log.Driver{openAhead(t, chats), openAhead(t, chats)}
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := ds[i%2]
			th := "telegram:" + strconv.Itoa(i)
			if _, err := d.Lease(ctx, th, "h", time.Minute); err != nil {
				errs <- err
				return
			}
			for seq := int64(1); seq <= 3; seq++ {
				if err := d.Append(ctx, th, storetest.Event(seq, th)); err != nil {
					errs <- err
					return
				}
			}
			errs <- d.Release(ctx, th, "h")
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range ds {
		d.WaitAhead()
	}
	for i := range n {
		th := "telegram:" + strconv.Itoa(i)
		es, err := ds[0].Read(ctx, th, 1)
		if err != nil || len(es) != 3 || es[2].Seq != 3 {
			t.Fatalf("%s: %d events, %v", th, len(es), err)
		}
	}
	entries, _ := os.ReadDir(chats)
	others := 0
	for _, e := range entries {
		if _, err := contract.FolderThread(e.Name()); err == nil {
			continue
		}
		if e.Name() != log.AheadFolder && e.Name() != log.AheadFolder+"-new" {
			t.Errorf("%s left in the conversations folder", e.Name())
		}
		others++
	}
	if len(entries)-others != n {
		t.Fatalf("%d conversations' folders, want %d", len(entries)-others, n)
	}
}

// TestMadeAheadSynced: the first event of a conversation returns only
// once its folder's names and the conversations folder's (the rename that
// put the folder made ahead in place) are on the disk, so a machine that
// stops right after loses no event it acknowledged. A folder made ahead
// has its names synced as it is made, off any message's path, so the
// first event in it syncs only the conversations folder; one made ahead
// by another (another process's driver) is synced as one made then; a
// later event syncs no folder.
func TestMadeAheadSynced(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("folders are made ahead on Linux")
	}
	ctx := context.Background()
	chats := t.TempDir()
	var mu sync.Mutex
	var synced []string
	log.WatchSyncDir(t, func(dir string) {
		mu.Lock()
		defer mu.Unlock()
		synced = append(synced, dir)
	})
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		got := synced
		synced = nil
		slices.Sort(got)
		return got
	}
	d := openAhead(t, chats)
	if _, err := d.Lease(ctx, "telegram:1", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := d.Release(ctx, "telegram:1", "h"); err != nil {
		t.Fatal(err)
	}
	d.WaitAhead()
	ahead := filepath.Join(chats, log.AheadFolder)
	if got, want := seen(), []string{ahead + "-new"}; !slices.Equal(got, want) {
		t.Fatalf("making the folder ahead synced the names of %q, want %q", got, want)
	}
	made := stat(t, ahead)
	if _, err := d.Lease(ctx, "telegram:2", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(chats, "telegram-2")
	if !os.SameFile(made, stat(t, dir)) {
		t.Fatal("the folder made ahead wasn't taken")
	}
	if err := d.Append(ctx, "telegram:2", storetest.Event(1, "a")); err != nil {
		t.Fatal(err)
	}
	if got, want := seen(), []string{chats}; !slices.Equal(got, want) {
		t.Fatalf("the first event synced the names of %q, want %q", got, want)
	}
	if err := d.Append(ctx, "telegram:2", storetest.Event(2, "a")); err != nil {
		t.Fatal(err)
	}
	if got := seen(); len(got) != 0 {
		t.Fatalf("the second event synced the names of %q", got)
	}

	// The next folder made ahead, taken by another driver, which didn't
	// sync it.
	if err := d.Release(ctx, "telegram:2", "h"); err != nil {
		t.Fatal(err)
	}
	d.WaitAhead()
	seen()
	made = stat(t, ahead)
	other := openAhead(t, chats)
	if _, err := other.Lease(ctx, "telegram:3", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(chats, "telegram-3")
	if !os.SameFile(made, stat(t, dir)) {
		t.Fatal("the folder made ahead wasn't taken")
	}
	if err := other.Append(ctx, "telegram:3", storetest.Event(1, "a")); err != nil {
		t.Fatal(err)
	}
	if got, want := seen(), []string{chats, dir}; !slices.Equal(got, want) {
		t.Fatalf("the first event in a folder another made ahead synced the names of %q, want %q", got, want)
	}

	// One this driver made, whose events.jsonl was made again since.
	if err := other.Release(ctx, "telegram:3", "h"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lease(ctx, "telegram:4", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := d.Release(ctx, "telegram:4", "h"); err != nil {
		t.Fatal(err)
	}
	d.WaitAhead()
	events := filepath.Join(ahead, log.EventsFile)
	if err := os.Remove(events); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(events, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	seen()
	if _, err := d.Lease(ctx, "telegram:5", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := d.Append(ctx, "telegram:5", storetest.Event(1, "a")); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(chats, "telegram-5")
	if got, want := seen(), []string{chats, dir}; !slices.Equal(got, want) {
		t.Fatalf("the first event in a folder whose events.jsonl was made again synced the names of %q, want %q", got, want)
	}
}
