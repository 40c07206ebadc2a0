package memory_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/memory"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/router"
	"github.com/lnk-dev/link/store/sqlite"
)

func search(tb testing.TB, m *memory.Memory, q string) memory.Found {
	tb.Helper()
	a, err := m.Search(context.Background(), q, 10)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func sources(a memory.Found) []string {
	var out []string
	for _, r := range a.Results {
		out = append(out, fmt.Sprintf("%s:%d", r.Source, r.Line))
	}
	return out
}

// A search finds what was just written and never what was just removed:
// a file added, changed or removed, a note remembered or forgotten, is
// seen by the next search, with where it is and a snippet.
func TestSearchSeesChanges(t *testing.T) {
	ctx := context.Background()
	m, p := newMemory(t, t.TempDir())
	file := filepath.Join(p.Files(), "trips", "lisbon.md")
	write(t, file, "# Lisbon\n\nWe stayed near the tram line.\nThe pastel de nata at Manteigaria was the best.\n")
	a := search(t, m, "manteigaria")
	if got := sources(a); len(got) != 1 || got[0] != "files/trips/lisbon.md:1" || !strings.Contains(a.Results[0].Snippet, "Manteigaria was the best") {
		t.Fatalf("results %v: %+v", got, a.Results)
	}
	if a.Ranking != "full text (BM25)" || a.Fresh.Stale() {
		t.Fatalf("ranking %q, fresh %+v", a.Ranking, a.Fresh)
	}
	write(t, file, "# Lisbon\n\nWe ate at Time Out Market instead.\n")
	if got := sources(search(t, m, "manteigaria")); len(got) != 0 {
		t.Fatalf("a changed file's old words still found: %v", got)
	}
	if got := sources(search(t, m, "market")); len(got) != 1 {
		t.Fatalf("a changed file's new words not found: %v", got)
	}
	os.Remove(file)
	if got := sources(search(t, m, "market")); len(got) != 0 {
		t.Fatalf("a removed file still found: %v", got)
	}
	if _, err := m.Remember(ctx, "Ana's locker code is 4471", nil); err != nil {
		t.Fatal(err)
	}
	a = search(t, m, "locker")
	if got := sources(a); len(got) != 1 || got[0] != "memory/notes.md:1" {
		t.Fatalf("a note just remembered: %v", got)
	}
	if _, err := m.Forget(ctx, []string{"locker"}); err != nil {
		t.Fatal(err)
	}
	if got := sources(search(t, m, "locker")); len(got) != 0 {
		t.Fatalf("a note just forgotten still found: %v", got)
	}
}

// Chinese and Japanese, written without spaces, are found by any part
// of their text, two characters or more, and a part not in them isn't.
func TestSearchCJK(t *testing.T) {
	m, p := newMemory(t, t.TempDir())
	write(t, filepath.Join(p.Files(), "zh.md"), "我喜欢吃苹果和香蕉。\n")
	write(t, filepath.Join(p.Files(), "ja.md"), "昨日は東京で寿司を食べました。\n")
	write(t, filepath.Join(p.Files(), "en.md"), "Apples and bananas.\n")
	for _, c := range []struct{ q, want string }{
		{"苹果", "files/zh.md:1"},
		{"香蕉", "files/zh.md:1"},
		{"我喜欢吃苹果", "files/zh.md:1"},
		{"寿司", "files/ja.md:1"},
		{"東京で寿司", "files/ja.md:1"},
		{"食べました", "files/ja.md:1"},
	} {
		a := search(t, m, c.q)
		if got := sources(a); len(got) != 1 || got[0] != c.want {
			t.Errorf("%q: %v, want %s", c.q, got, c.want)
		} else if !strings.Contains(a.Results[0].Snippet, c.q) {
			t.Errorf("%q: snippet %q", c.q, a.Results[0].Snippet)
		}
	}
	if got := sources(search(t, m, "苹香")); len(got) != 0 {
		t.Errorf("characters not side by side found: %v", got)
	}
}

// A conversation is searched through its copy, a log's chat.md or, for
// one kept compact, memory's own made from its events; each result names
// its conversation and message. The message not yet answered is in
// neither.
func TestSearchConversations(t *testing.T) {
	m, p := newMemory(t, t.TempDir())
	lg := log.Open(p.Chats())
	say(t, p, lg, "telegram:1", "my bike is parked at the north station", "Noted: north station.")
	cp := compact.Open(p.Chats())
	dir, _ := p.Conversation("slack:2")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A compact conversation: its events.zst says so.
	if err := os.WriteFile(filepath.Join(dir, "events.zst"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	say(t, p, cp, "slack:2", "the dentist is on thursday at noon", "I'll remind you.")
	// A message still being answered.
	if err := cp.Append(context.Background(), "slack:2", store.Event{Seq: 3, Kind: store.KindMessage, Text: "what about the plumber"}); err != nil {
		t.Fatal(err)
	}
	a := search(t, m, "bike station")
	if len(a.Results) == 0 || a.Results[0].Source != "chats/telegram:1" || a.Results[0].Seq != 1 || !strings.HasPrefix(a.Results[0].Label, "Owner · ") {
		t.Fatalf("log conversation: %+v", a.Results)
	}
	a = search(t, m, "dentist")
	if len(a.Results) != 1 || a.Results[0].Source != "chats/slack:2" || a.Results[0].Seq != 1 {
		t.Fatalf("compact conversation: %+v", a.Results)
	}
	if got := sources(search(t, m, "plumber")); len(got) != 0 {
		t.Fatalf("the message being answered found: %v", got)
	}
	// Answered, it is found: of two messages together that match as
	// well, the later.
	if err := cp.Append(context.Background(), "slack:2", store.Event{Seq: 4, Kind: store.KindAnswer, Text: "The plumber comes friday."}); err != nil {
		t.Fatal(err)
	}
	if a := search(t, m, "plumber"); len(a.Results) != 1 || a.Results[0].Seq != 4 || a.Results[0].Snippet != "The plumber comes friday." {
		t.Fatalf("an answered message: %+v", a.Results)
	}
}

// The index is derived: removed, it is made again from the sources at
// the next search.
func TestIndexLost(t *testing.T) {
	m, p := newMemory(t, t.TempDir())
	write(t, filepath.Join(p.Files(), "a.md"), "quokka sightings\n")
	if got := sources(search(t, m, "quokka")); len(got) != 1 {
		t.Fatal(got)
	}
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(p.Root, "memory", "index.sqlite"+s))
	}
	if got := sources(search(t, m, "quokka")); len(got) != 1 {
		t.Fatalf("after the index was lost: %v", got)
	}
}

// Searches never find their own earlier results: twenty searches, then
// the first again, give the same top 10.
func TestSearchStable(t *testing.T) {
	m, p := newMemory(t, t.TempDir())
	for i := range 40 {
		write(t, filepath.Join(p.Files(), fmt.Sprintf("n%02d.md", i)), fmt.Sprintf("note %d about gardening and tomatoes %s\n", i, strings.Repeat("soil ", i%7)))
	}
	first := sources(search(t, m, "tomatoes soil"))
	for i := range 20 {
		search(t, m, fmt.Sprintf("gardening %d", i))
	}
	if again := sources(search(t, m, "tomatoes soil")); strings.Join(again, " ") != strings.Join(first, " ") {
		t.Fatalf("the same search gave\n%v\nthen\n%v", first, again)
	}
}

// A search made while the index is still taking in what changed (a
// first search over a large home) says it is behind and how far, rather
// than answering as if nothing matched; the next catches up.
func TestSearchBehindSaysSo(t *testing.T) {
	home := t.TempDir()
	p, _ := store.For(home, "main")
	for i := range 300 {
		write(t, filepath.Join(p.Files(), fmt.Sprintf("f%03d.md", i)), fmt.Sprintf("wombat number %d\n", i))
	}
	m, _ := newMemoryWith(t, p, nil, func(c *memory.Config) { c.SyncBudget = time.Nanosecond })
	a := search(t, m, "wombat")
	if a.Fresh.Pending != 300 || !a.Fresh.Stale() || len(a.Results) != 0 {
		t.Fatalf("behind: %+v, %d results", a.Fresh, len(a.Results))
	}
	if _, err := m.Sync(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if a := search(t, m, "wombat"); a.Fresh.Stale() || len(a.Results) != 10 {
		t.Fatalf("caught up: %+v, %d results", a.Fresh, len(a.Results))
	}
}

// A conversation kept by a driver (sqlite) is searched through memory's
// own copy, made from its events.
func TestSearchDriverConversation(t *testing.T) {
	p, _ := store.For(t.TempDir(), "main")
	r := sqliteRouter(t, p, p.Chats())
	say(t, p, r, "signal:5", "the wifi password is correct-horse", "Saved.")
	m, _ := newMemoryWith(t, p, nil, func(c *memory.Config) { c.Conversations = r })
	a := search(t, m, "wifi password")
	if len(a.Results) != 1 || a.Results[0].Source != "chats/signal:5" || a.Results[0].Snippet != "the wifi password is correct-horse" {
		t.Fatalf("%+v", a.Results)
	}
	if _, err := os.Stat(filepath.Join(p.Root, "memory", "copies", "signal-5.md")); err != nil {
		t.Fatalf("memory's own copy: %v", err)
	}
	say(t, p, r, "signal:5", "and the door code is 1234", "Saved too.")
	if a := search(t, m, "door code"); len(a.Results) != 1 || a.Results[0].Seq != 3 {
		t.Fatalf("added to since: %+v", a.Results)
	}
}

// A conversation kept by a driver off the machine (here a SQLite file
// outside the agent's conversations folder, which changes no file of it)
// is asked for its last event at most every OffMachineEvery: a message
// added since is found once that has passed, and not asked for before.
func TestSearchOffMachineConversation(t *testing.T) {
	p, _ := store.For(t.TempDir(), "main")
	r := sqliteRouter(t, p, t.TempDir())
	say(t, p, r, "signal:5", "the wifi password is correct-horse", "Saved.")
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	asked := &countingLatest{Conversations: r}
	m, _ := newMemoryWith(t, p, nil, func(c *memory.Config) {
		c.Conversations, c.OffMachineEvery = asked, time.Minute
		c.Now = func() time.Time { return now }
	})
	if a := search(t, m, "wifi password"); len(a.Results) != 1 {
		t.Fatalf("%+v", a.Results)
	}
	before := asked.n
	say(t, p, r, "signal:5", "and the door code is 1234", "Saved too.")
	now = now.Add(time.Minute - time.Second)
	if a := search(t, m, "door code"); len(a.Results) != 0 || asked.n != before {
		t.Fatalf("within OffMachineEvery: %+v, asked %d times more", a.Results, asked.n-before)
	}
	now = now.Add(time.Second)
	if a := search(t, m, "door code"); len(a.Results) != 1 || a.Results[0].Seq != 3 || asked.n == before {
		t.Fatalf("after OffMachineEvery: %+v, asked %d times more", a.Results, asked.n-before)
	}
}

// sqliteRouter routes the conversations of the agent at p, each new one
// kept by SQLite in a file of the folder chats, closed with the test.
func sqliteRouter(t *testing.T, p store.Paths, chats string) *router.Router {
	db, err := sqlite.Open(chats)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r, err := router.New(p, sqlite.Name, map[string]store.Conversations{log.Name: log.Open(p.Chats()), sqlite.Name: db})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// countingLatest counts the calls for a conversation's latest events.
type countingLatest struct {
	store.Conversations
	n int
}

func (c *countingLatest) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	c.n++
	return store.Latest(ctx, c.Conversations, thread, n)
}

// swapOnSearch is an Index that, at its next Search, first replaces the
// file at path with a symbolic link to target: a link put in place after
// the index was brought up to date, before a hit's text is read.
type swapOnSearch struct {
	memory.Index
	path, target string
}

func (s *swapOnSearch) Search(ctx context.Context, query string, n int) ([]memory.Hit, error) {
	if s.path != "" {
		if err := os.Remove(s.path); err != nil {
			return nil, err
		}
		if err := os.Symlink(s.target, s.path); err != nil {
			return nil, err
		}
		s.path = ""
	}
	return s.Index.Search(ctx, query, n)
}

// A hit's text is read as the agent's other files are, never through a
// link: a file swapped for a link to another agent's file after the
// index was brought up to date gives no result, and nothing of the
// other file.
func TestSearchNotThroughALink(t *testing.T) {
	home := t.TempDir()
	secret := filepath.Join(mustPaths(t, home, "work").Files(), "secret.md")
	write(t, secret, "apple orchard: the SECRET key is 42, never to be read by main\n")
	var swap *swapOnSearch
	m, p := newMemoryWith(t, mustPaths(t, home, "main"), nil, func(c *memory.Config) {
		swap = &swapOnSearch{Index: c.Index}
		c.Index = swap
	})
	file := filepath.Join(p.Files(), "fruit.md")
	write(t, file, "apple orchard: we picked apples in the autumn, a fine day out\n")
	if got := sources(search(t, m, "orchard")); len(got) != 1 {
		t.Fatalf("before the swap: %v", got)
	}
	swap.path, swap.target = file, secret
	a := search(t, m, "orchard")
	for _, r := range a.Results {
		if strings.Contains(r.Snippet, "SECRET") {
			t.Fatalf("a hit read through a link to another agent's file: %+v", r)
		}
	}
	if len(a.Results) != 0 {
		t.Errorf("results %v, want none: the file is a link now", sources(a))
	}
}

func mustPaths(tb testing.TB, home, agent string) store.Paths {
	tb.Helper()
	p, err := store.For(home, agent)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// An area of the home that is a symbolic link (files/ linked to another
// agent's files/) is refused whole, naming it: none of the other agent's
// files is listed, read or named in what a search says it skipped.
func TestSearchAreaLink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	home := t.TempDir()
	theirs := mustPaths(t, home, "work").Files()
	write(t, filepath.Join(theirs, "payroll-2027.md"), "apple orchard: the SECRET key is 42, never to be read by main\n")
	m, p := newMemoryWith(t, mustPaths(t, home, "main"), nil)
	write(t, filepath.Join(p.Root, "skills", "fruit", "SKILL.md"), "apple orchard: our own skill\n")
	if err := os.Symlink(theirs, p.Files()); err != nil {
		t.Fatal(err)
	}
	a := search(t, m, "orchard")
	if got := sources(a); len(got) != 1 || !strings.HasPrefix(got[0], "skills/fruit/SKILL.md") {
		t.Errorf("results %v, want the skill alone", got)
	}
	said := strings.Join(a.Fresh.Skipped, "\n")
	if strings.Contains(said, "payroll") {
		t.Fatalf("another agent's file named through a link: %s", said)
	}
	if !strings.Contains(said, "files: ") || !strings.Contains(said, "symbolic link") {
		t.Errorf("the link isn't said: %q", said)
	}
}

// A query is its words joined by OR: a word found nowhere (a typo, a
// name never written) never empties it, whether the words found are
// rare or common, and a query of common words alone finds them.
func TestSearchWordFoundNowhere(t *testing.T) {
	m, p := newMemory(t, t.TempDir())
	// water is in every file, more than a tenth of 120 chunks: common.
	for i := range 120 {
		write(t, filepath.Join(p.Files(), fmt.Sprintf("n%03d.md", i)), fmt.Sprintf("page %d: water the garden\n", i))
	}
	write(t, filepath.Join(p.Files(), "trip.md"), "the offline maps for the ferry\n")
	for _, c := range []struct {
		q    string
		want string // the start of a source every answer must hold
	}{
		{"water", "files/n"},
		{"water zzqnowhere", "files/n"},
		{"offline zzzyyxq", "files/trip.md:"},
		{"offlien offline", "files/trip.md:"},
		{"Zyxwvut ferry", "files/trip.md:"},
		{"water garden", "files/n"},
		{"water garden zzqnowhere", "files/n"},
		{"offline water", "files/trip.md:"},
	} {
		got := sources(search(t, m, c.q))
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, c.want) }) {
			t.Errorf("%q found %v, want %s among them", c.q, got, c.want)
		}
	}
	if got := sources(search(t, m, "zzqnowhere qqxnothing")); len(got) != 0 {
		t.Errorf("words found nowhere found %v", got)
	}
}

// The owner's note ranks above the answers that quoted it: for its one
// rare word, the note comes first, however many answers repeat it, and
// even when more of them than the results asked for do.
func TestSearchNoteAboveItsEchoes(t *testing.T) {
	ctx := context.Background()
	m, p := newMemory(t, t.TempDir())
	if _, err := m.Remember(ctx, "The wifi password at the cabin is Quokkabridge7, written on the fridge", nil); err != nil {
		t.Fatal(err)
	}
	lg := log.Open(p.Chats())
	for i := range 12 {
		say(t, p, lg, fmt.Sprintf("telegram:%d", i), "what's the wifi at the cabin?", "Quokkabridge7.")
	}
	a, err := m.Search(ctx, "quokkabridge7", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Results) != 5 || a.Results[0].Source != memory.NotesName {
		t.Fatalf("the note isn't first: %v", sources(a))
	}
	// A message holding more of the query's words still ranks above it.
	say(t, p, lg, "telegram:99", "the cabin wifi password Quokkabridge7 fridge", "Noted.")
	if got := sources(search(t, m, "cabin wifi password quokkabridge7 fridge")); len(got) < 2 || got[0] != "memory/notes.md:1" {
		t.Fatalf("a note holding every word: %v", got)
	}
}

// Indexing is bounded whatever a source's shape: a file past 1 MiB is
// not indexed and said so, and a 16 MiB answer on one line is cut into
// chunks of a few KB, so a word at its very end is found, naming the
// message, and no row of the index holds the whole line.
func TestIndexOneLongLine(t *testing.T) {
	m, p := newMemory(t, t.TempDir())
	big := filepath.Join(p.Files(), "big.txt")
	if err := os.MkdirAll(p.Files(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, append(bytes.Repeat([]byte("abcdefghij "), 10<<20/11*10), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(p.Files(), "small.md"), "abcdefghij here\n")
	say(t, p, log.Open(p.Chats()), "telegram:1", "a long one please", strings.Repeat("klmnopqrst ", 16<<20/11)+"zebraending")
	// The 26 MiB are taken in whole first, however long that takes (past
	// a search's budget under the race detector on a loaded machine), so
	// the searches below look at what indexing kept, not at how far it got.
	if fresh, err := m.Sync(context.Background(), 0); err != nil || fresh.Pending != 0 {
		t.Fatalf("synced: %+v, %v", fresh, err)
	}
	a := search(t, m, "abcdefghij")
	if got := sources(a); len(got) != 1 || got[0] != "files/small.md:1" {
		t.Fatalf("results %v", got)
	}
	if len(a.Fresh.NotIndexed) != 1 || !strings.HasPrefix(a.Fresh.NotIndexed[0], "files/big.txt (") || a.Fresh.Stale() {
		t.Fatalf("not indexed: %+v", a.Fresh)
	}
	a = search(t, m, "zebraending")
	if len(a.Results) != 1 || a.Results[0].Source != "chats/telegram:1" || a.Results[0].Seq != 2 || !strings.HasSuffix(a.Results[0].Snippet, "zebraending") {
		t.Fatalf("the end of a 16 MiB line: %+v", a.Results)
	}
	// Shrunk under the cap, it is indexed.
	write(t, big, "abcdefghij now small\n")
	if got := sources(search(t, m, "abcdefghij")); len(got) != 2 {
		t.Fatalf("after the file shrank: %v", got)
	}
}

// A conversation whose copy is past 1 MiB, as a long one comes to be,
// is found in its last messages too, not only in its first MiB.
func TestSearchLongConversation(t *testing.T) {
	m, p := newMemory(t, t.TempDir())
	var pairs []string
	for i := range 1100 {
		pairs = append(pairs, fmt.Sprintf("message %d %s", i, strings.Repeat("filler words here ", 60)), "ok")
	}
	pairs = append(pairs, "the spare key is under the blue flowerpot", "Noted.")
	say(t, p, log.Open(p.Chats()), "telegram:7", pairs...)
	a := search(t, m, "flowerpot")
	if len(a.Results) != 1 || a.Results[0].Source != "chats/telegram:7" || a.Results[0].Seq != 2201 {
		t.Fatalf("the last message of a long conversation: %+v", a.Results)
	}
}
