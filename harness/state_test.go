package harness_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// One conversation that can't be read doesn't cost the export of the
// others: among five conversations on real files, one's files are made
// unreadable in turn (its events corrupt, a link where its events file
// should be, a line over the most, its driver's file not what it keeps).
// The export gives the other four with every text, names the bad one in
// its failed with why (no path of the machine in it), and the document,
// failed and all, is imported as it is.
func TestStateExportFailsOne(t *testing.T) {
	const bad = "telegram:2"
	spoil := map[string]struct {
		do  func(t *testing.T, dir string)
		why string
	}{
		"corrupt": {func(t *testing.T, dir string) { corrupt(t, filepath.Join(dir, "events.jsonl")) }, "corrupt"},
		"link": {func(t *testing.T, dir string) {
			events := filepath.Join(dir, "events.jsonl")
			elsewhere := filepath.Join(t.TempDir(), "events.jsonl")
			if err := os.Rename(events, elsewhere); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, events); err != nil {
				t.Fatal(err)
			}
		}, "link"},
		"folder link": {func(t *testing.T, dir string) {
			elsewhere := filepath.Join(t.TempDir(), "conversation")
			if err := os.Rename(dir, elsewhere); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, dir); err != nil {
				t.Fatal(err)
			}
			before := listing(t, elsewhere)
			t.Cleanup(func() {
				if after := listing(t, elsewhere); !slices.Equal(after, before) {
					t.Errorf("written where the folder's link points: was\n%v\nis\n%v", before, after)
				}
			})
		}, "symbolic link"},
		"too big": {func(t *testing.T, dir string) {
			// Sparse: a last line of 65 MiB of zeros, past store.MaxLine.
			if err := os.Truncate(filepath.Join(dir, "events.jsonl"), store.MaxLine+1<<20); err != nil {
				t.Fatal(err)
			}
		}, "over"},
		"driver": {func(t *testing.T, dir string) {
			// A compact conversation whose frame file isn't zstd.
			if err := os.Remove(filepath.Join(dir, "events.jsonl")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "events.zst"), []byte("not zstd at all"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "events.zst"},
	}
	for name, s := range spoil {
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			var want []contract.StateConversation
			for i := range 5 {
				th := fmt.Sprintf("telegram:%d", i)
				msg, answer := fmt.Sprintf("message %d", i), fmt.Sprintf("answer %d", i)
				crashed(t, r.Home, th, store.Event{Kind: store.KindMessage, Text: msg}, store.Event{Kind: store.KindAnswer, Text: answer, Seen: 1})
				if th != bad {
					want = append(want, contract.StateConversation{Thread: th, Entries: []contract.StateEntry{
						{Role: contract.RoleUser, Text: msg}, {Role: contract.RoleAgent, Text: answer},
					}})
				}
			}
			dir, err := r.Answers().Paths.Conversation(bad)
			if err != nil {
				t.Fatal(err)
			}
			s.do(t, dir)

			doc, err := r.Harness.ExportState(t.Context(), testAgent, contract.StateExportParams{})
			if err != nil {
				t.Fatalf("export: %v", err)
			}
			got := doc.Conversations
			for i := range got {
				for j := range got[i].Entries {
					got[i].Entries[j].Time = nil
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("exported (-want +got):\n%s", diff)
			}
			if len(doc.Failed) != 1 || doc.Failed[bad] == "" {
				t.Fatalf("failed = %q, want %s alone", doc.Failed, bad)
			}
			why := doc.Failed[bad]
			if !strings.Contains(why, s.why) || strings.Contains(why, r.Home) {
				t.Fatalf("failed[%s] = %q: want it to say %q and name no path of the machine", bad, why, s.why)
			}
			t.Logf("failed[%s] = %q", bad, why)

			// Asked for by name, with a good one, it is the same.
			doc, err = r.Harness.ExportState(t.Context(), testAgent, contract.StateExportParams{Threads: []string{bad, "telegram:4"}})
			if err != nil || len(doc.Conversations) != 1 || len(doc.Failed) != 1 || doc.Failed[bad] == "" {
				t.Fatalf("export of %s and telegram:4 = %d conversations, failed %q, %v", bad, len(doc.Conversations), doc.Failed, err)
			}

			// An import reads nothing of failed: the answer goes in as it is.
			raw, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			in, err := contract.ParseStateDocument(raw)
			if err != nil {
				t.Fatalf("the export's answer isn't a document an import takes: %v", err)
			}
			other := newRig(t)
			res, err := other.Harness.ImportState(t.Context(), testAgent, in)
			if err != nil || len(res.Conversations) != 1 || res.Conversations[0].Thread != "telegram:4" {
				t.Fatalf("import = %+v, %v; want telegram:4 alone", res, err)
			}
		})
	}
}

// listing is each file under dir, with its size and time.
func listing(t *testing.T, dir string) []string {
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
		l = append(l, fmt.Sprintf("%s %d %v", path, fi.Size(), fi.ModTime()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// An import asked again takes nothing in twice: a conversation it wrote
// whole is that thread again; a conversation under the name that isn't
// the import's, event for event (another, or one an import stopped
// partway in), sends it to a link:import-N, as the first time.
func TestImportAgainNothingTwice(t *testing.T) {
	r := newRig(t)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	entries := func(prefix string, n int) []contract.StateEntry {
		var out []contract.StateEntry
		for i := range n {
			when := at.Add(time.Duration(i) * time.Minute)
			role := contract.RoleUser
			if i%2 == 1 {
				role = contract.RoleAgent
			}
			out = append(out, contract.StateEntry{Role: role, Text: fmt.Sprintf("%s %d", prefix, i), Time: &when})
		}
		return out
	}
	doc := contract.StateDocument{Conversations: []contract.StateConversation{
		{Thread: "telegram:1", Entries: entries("trip", 4)},
		{Thread: "telegram:2", Entries: entries("plans", 2)},
		{Thread: "telegram:3", Entries: entries("books", 3)},
	}}
	// telegram:2 another conversation of the same name; telegram:3 as an
	// import that stopped after its first entry left it.
	stored(t, r.Home, "telegram:2", store.Event{Seq: 1, Time: at, Kind: store.KindMessage, Text: "something else"})
	stored(t, r.Home, "telegram:3", store.Event{Seq: 1, Time: at, Kind: store.KindMessage, Text: "books 0"})
	want := []contract.ImportedConversation{{From: "telegram:1", Thread: "telegram:1"}, {From: "telegram:2", Thread: "link:import-1"}, {From: "telegram:3", Thread: "link:import-2"}}
	for try := range 2 {
		res, err := r.Harness.ImportState(t.Context(), testAgent, doc)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, res.Conversations); diff != "" {
			t.Fatalf("import %d (-want +got):\n%s", try+1, diff)
		}
		for _, c := range []struct {
			thread string
			texts  []string
		}{
			{"telegram:1", []string{"trip 0", "trip 1", "trip 2", "trip 3"}},
			{"link:import-1", []string{"plans 0", "plans 1"}},
			{"telegram:2", []string{"something else"}},
			{"telegram:3", []string{"books 0"}},
			{"link:import-2", []string{"books 0", "books 1", "books 2"}},
		} {
			var texts []string
			for _, e := range r.Events(c.thread) {
				texts = append(texts, e.Text)
			}
			if !slices.Equal(texts, c.texts) {
				t.Errorf("import %d: %s holds %q, want %q", try+1, c.thread, texts, c.texts)
			}
		}
		if evs := r.Events("link:import-3"); len(evs) != 0 {
			t.Errorf("import %d: link:import-3 holds %d events, want none", try+1, len(evs))
		}
	}
}
