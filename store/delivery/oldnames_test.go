package delivery

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/router"
)

// oldHold writes, by hand, the file an older Link left for an answer
// held while it was sent: in chats/telling, its JSON as that Link wrote
// it, with or without the checksum the last of them added.
func oldHold(t *testing.T, p store.Paths, id, thread, text string, sum bool) {
	t.Helper()
	oldHoldOf(t, p, map[string]any{"id": id, "thread": thread, "text": text, "kept": "2026-11-30T10:00:00Z"}, sum)
}

// oldHoldOf writes the hold of the answer fields name, as oldHold does.
func oldHoldOf(t *testing.T, p store.Paths, fields map[string]any, sum bool) {
	t.Helper()
	id := fields["id"].(string)
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	if sum {
		k, ok := parseHold(b, id)
		if !ok {
			t.Fatalf("%s doesn't read", b)
		}
		if b, err = encodeHold(k, 0); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(p.Chats(), OldSendingDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// handedOverOnce hands over f's answers until none is left, single
// phase, and says each text handed over, sorted; it fails the test when
// one comes twice.
func handedOverOnce(t *testing.T, f *Answers) []string {
	t.Helper()
	var got []string
	for range 3 {
		res, err := handOver(f, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, texts(res)...)
	}
	slices.Sort(got)
	if len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatalf("handed over %q: one twice", got)
	}
	return got
}

// gone fails the test unless chats/telling is gone and the thread
// listing the sweep, memory and convert read passes over both folders.
func oldGone(t *testing.T, p store.Paths) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(p.Chats(), OldSendingDir)); !os.IsNotExist(err) {
		t.Errorf("chats/%s still there: %v", OldSendingDir, err)
	}
	threads, err := router.Threads(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range threads {
		if !strings.Contains(th, ":") {
			t.Errorf("listed %q as a thread", th)
		}
	}
}

// A home an older Link wrote, its answers held in chats/telling, is
// opened by this one: each answer is handed over once, and the old
// folder is gone, whether the harness moved it as it opened the store
// or the first recover did.
func TestOldSendingFolderMoved(t *testing.T) {
	for _, opened := range []bool{true, false} {
		t.Run(map[bool]string{true: "opened", false: "recovered"}[opened], func(t *testing.T) {
			ctx := context.Background()
			p := agent(t)
			a, _ := NewID("telegram:1")
			b, _ := NewID("telegram:2")
			oldHold(t, p, a, "telegram:1", "older, no checksum", false)
			oldHold(t, p, b, "telegram:2", "older, checksum", true)
			// A spare the older Link let go, and a thread folder besides.
			if err := os.WriteFile(filepath.Join(p.Chats(), OldSendingDir, spareName+"0011"), []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
			f := &Answers{Paths: p}
			if _, err := f.Keep(ctx, "telegram:3", "pending", time.Time{}, 0); err != nil {
				t.Fatal(err)
			}
			if opened {
				if err := f.MoveOld(); err != nil {
					t.Fatal(err)
				}
				oldGone(t, p)
				// Renamed whole, the spare with them: never read as an answer,
				// removed once stale.
				holds, _ := sendingFiles(t, p)
				if slices.Sort(holds); !slices.Equal(holds, sortedNames(a, b)) {
					t.Fatalf("chats/%s holds %v: want %s and %s", SendingDir, holds, a, b)
				}
			}
			got := handedOverOnce(t, f)
			if want := []string{"older, checksum", "older, no checksum", "pending"}; !slices.Equal(got, want) {
				t.Fatalf("handed over %q, want %q", got, want)
			}
			oldGone(t, p)
		})
	}
}

func sortedNames(ids ...string) []string {
	var out []string
	for _, id := range ids {
		out = append(out, id+".json")
	}
	slices.Sort(out)
	return out
}

// Both folders there: a crash mid-move, or an older Link that ran after
// this one moved them. Every state a crash between two steps of MoveOld
// leaves (k of the old files moved, the rest not; all moved and the old
// folder left empty; a file of the same answer in both, its later write
// in the old folder) hands each answer over once, the later write's
// words, and leaves no old folder.
func TestOldSendingFolderBothThere(t *testing.T) {
	const n = 3
	for moved := 0; moved <= n; moved++ {
		for _, twice := range []bool{false, true}[:min(moved+1, 2)] {
			name := map[bool]string{false: "moved", true: "moved-rewritten"}[twice]
			t.Run(name+string(rune('0'+moved)), func(t *testing.T) {
				ctx := context.Background()
				p := agent(t)
				f := &Answers{Paths: p}
				// One held by this Link already.
				id, _ := NewID("telegram:9")
				if err := f.Hold(ctx, Answer{ID: id, Thread: "telegram:9", Text: "new"}, false); err != nil {
					t.Fatal(err)
				}
				var want []string
				for i := range n {
					th := "telegram:" + string(rune('1'+i))
					oid, _ := NewID(th)
					text := "old " + th
					oldHold(t, p, oid, th, text, i%2 == 0)
					if i < moved {
						// Moved before the crash.
						from := filepath.Join(p.Chats(), OldSendingDir, oid+".json")
						to := filepath.Join(p.Chats(), SendingDir, oid+".json")
						if err := os.Rename(from, to); err != nil {
							t.Fatal(err)
						}
						if twice && i == 0 {
							// The older Link wrote it again after.
							text = "old, written again " + th
							oldHold(t, p, oid, th, text, true)
							later := time.Now().Add(time.Minute)
							if err := os.Chtimes(from, later, later); err != nil {
								t.Fatal(err)
							}
						}
					}
					want = append(want, text)
				}
				want = append(want, "new")
				slices.Sort(want)
				if got := handedOverOnce(t, f); !slices.Equal(got, want) {
					t.Fatalf("handed over %q, want %q", got, want)
				}
				oldGone(t, p)
			})
		}
	}
}

// A file of an answer in the old folder whose copy in the new one is
// the later (the old one left by a crash between a link and a remove, or
// written before) is removed, not moved over the later one.
func TestOldSendingFolderKeepsLater(t *testing.T) {
	p := agent(t)
	id, _ := NewID("telegram:1")
	oldHold(t, p, id, "telegram:1", "earlier", true)
	f := &Answers{Paths: p}
	if err := f.Hold(context.Background(), Answer{ID: id, Thread: "telegram:1", Text: "later"}, false); err != nil {
		t.Fatal(err)
	}
	earlier := time.Now().Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(p.Chats(), OldSendingDir, id+".json"), earlier, earlier); err != nil {
		t.Fatal(err)
	}
	if got := handedOverOnce(t, f); !slices.Equal(got, []string{"later"}) {
		t.Fatalf("handed over %q, want the later", got)
	}
	oldGone(t, p)
}

// What MoveOld couldn't move yet is read where it is, and let go there:
// an answer of the old folder is handed over once even when the listing
// that reads it doesn't move it (an older Link wrote it after the move).
func TestOldSendingFolderReadInPlace(t *testing.T) {
	ctx := context.Background()
	p := agent(t)
	f := &Answers{Paths: p}
	id, _ := NewID("telegram:1")
	oldHold(t, p, id, "telegram:1", "old", false)
	all, err := f.holdsIn(OldSendingDir, nil)
	if err != nil || len(all) != 1 {
		t.Fatalf("old folder read %+v, %v", all, err)
	}
	if err := f.release(id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(p.Chats(), OldSendingDir, id+".json")); !os.IsNotExist(err) {
		t.Fatalf("release left the old folder's file: %v", err)
	}
	if got := handedOverOnce(t, f); len(got) != 0 {
		t.Fatalf("handed over %q after its release", got)
	}
	if all, err := f.Pending(ctx); err != nil || len(all) != 0 {
		t.Fatalf("pending %+v, %v", all, err)
	}
}

// An answers.json and a hold an older Link wrote name an answer's time
// "kept" and its mark for lnk agent chat "held": read as "at" and
// "forChat", so a single-phase recover leaves the answers kept for the
// chat and hands over the other, and lnk agent chat takes its own by
// their time; every file written again has the new names only.
func TestOldFieldNames(t *testing.T) {
	ctx := context.Background()
	p := agent(t)
	name, err := contract.ThreadFolder("link:notes")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := p.Conversation("link:notes")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := `[{"id":"` + name + `~aa","thread":"link:notes","text":"for the chat","kept":"2026-11-30T10:00:00Z","seq":3,"held":true},
	{"id":"` + name + `~bb","thread":"link:notes","text":"for the bridge","kept":"2026-11-30T09:00:00Z","seq":2}]`
	if err := os.WriteFile(filepath.Join(dir, folder.Answers), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	oldHoldOf(t, p, map[string]any{"id": name + "~cc", "thread": "link:notes", "text": "held for the chat", "kept": "2026-11-30T10:05:00Z", "held": true}, true)

	f := &Answers{Paths: p}
	all, err := f.Pending(ctx)
	if err != nil || len(all) != 3 {
		t.Fatalf("pending %+v, %v: want 3", all, err)
	}
	at := map[string]time.Time{}
	for _, k := range all {
		at[k.Text] = k.At
		if k.ForChat != (k.Text != "for the bridge") {
			t.Errorf("%q read as for chat %v", k.Text, k.ForChat)
		}
	}
	t9 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	if !at["for the bridge"].Equal(t9) || !at["for the chat"].Equal(t9.Add(time.Hour)) || !at["held for the chat"].Equal(t9.Add(65*time.Minute)) {
		t.Errorf("read at %v", at)
	}
	if got := handedOverOnce(t, f); !slices.Equal(got, []string{"for the bridge"}) {
		t.Fatalf("single phase handed over %q, want only the one not for the chat", got)
	}
	written, err := os.ReadFile(filepath.Join(dir, folder.Answers))
	if err != nil {
		t.Fatal(err)
	}
	var keys []map[string]json.RawMessage
	if err := json.Unmarshal(written, &keys); err != nil || len(keys) != 2 {
		t.Fatalf("answers.json %s, %v: want the two for the chat", written, err)
	}
	for _, k := range keys {
		_, kept := k["kept"]
		_, held := k["held"]
		if kept || held || string(k["forChat"]) != "true" || k["at"] == nil {
			t.Errorf("written %s: want at and forChat, no kept or held", written)
		}
	}
	for _, want := range []string{"for the chat", "held for the chat"} {
		k, ok, err := f.TakeAfter(ctx, "link:notes", t9.Add(30*time.Minute))
		if err != nil || !ok || k.Text != want {
			t.Fatalf("lnk agent chat took %+v, %v, %v: want %q", k, ok, err, want)
		}
	}
}
