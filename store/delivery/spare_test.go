package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// answerTurn runs one turn's delivery as the harness does: the answer
// held just before its event (seq, at) is stored, the event stored, the
// turn ended with its caller there, and the answer let go once told. It
// returns the hold's id and the file it was let go as, "" when delivered
// is false (the turn ended, its response never written).
func answerTurn(t *testing.T, f *Answers, c store.Conversations, thread, text string, seq int64, at time.Time, delivered bool) string {
	t.Helper()
	id, done := holdTurn(t, f, c, thread, text, seq, at)
	if delivered {
		done()
	}
	return id
}

// holdTurn is answerTurn up to the response's write: it returns the
// hold's id and what lets it go once the caller has it.
func holdTurn(t *testing.T, f *Answers, c store.Conversations, thread, text string, seq int64, at time.Time) (string, func()) {
	t.Helper()
	ctx := context.Background()
	turn := f.Begin(thread)
	hook := turn.Hook(ctx, text)
	e := store.Event{Seq: seq, Time: at, Kind: store.KindAnswer, Text: text}
	hook(e, false, nil)
	var err error
	if c != nil {
		err = c.Append(ctx, thread, e)
	}
	hook(e, true, err)
	if err != nil {
		t.Fatal(err)
	}
	done, err := turn.End(ctx, text, seq, false, false)
	if err != nil || done == nil {
		t.Fatalf("end: %v, let-go %v", err, done != nil)
	}
	return turn.id, done
}

// sendingFiles are the names in chats/sending: the holds (each reads as
// an answer of its own id) and the spares (the others).
func sendingFiles(t *testing.T, p store.Paths) (holds, spares []string) {
	t.Helper()
	dir := filepath.Join(p.Chats(), SendingDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := parseHold(b, strings.TrimSuffix(e.Name(), ".json")); ok {
			holds = append(holds, e.Name())
		} else {
			spares = append(spares, e.Name())
		}
	}
	return holds, spares
}

// callCount counts the calls on names a hold and its let-go make
// (openFile, renameFile, lstat) until the test ends.
type callCount struct{ opens, renames, lstats int }

func countCalls(t *testing.T) *callCount {
	c := &callCount{}
	wasOpen, wasRename, wasLstat := openFile, renameFile, lstat
	openFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		c.opens++
		return wasOpen(name, flag, perm)
	}
	renameFile = func(from, to string) error {
		c.renames++
		return wasRename(from, to)
	}
	lstat = func(name string) (fs.FileInfo, error) {
		c.lstats++
		return wasLstat(name)
	}
	t.Cleanup(func() { openFile, renameFile, lstat = wasOpen, wasRename, wasLstat })
	return c
}

// TestSpareReused: a hold let go becomes a spare named for its
// conversation's next answer, read as no answer by this process or
// another; that answer's hold is the same file where it is, holding the
// new answer alone (a shorter one padded, a longer one grown). Another
// conversation's hold takes it, renamed, and the spare it lets go is
// named for that conversation. Close removes the spares.
func TestSpareReused(t *testing.T) {
	p := agent(t)
	f := &Answers{Paths: p}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	answerTurn(t, f, nil, "telegram:1", "a first answer, a longer one than the next", 2, at, true)
	holds, spares := sendingFiles(t, p)
	if len(holds) != 0 || len(spares) != 1 || !strings.HasPrefix(spares[0], "telegram-1~") {
		t.Fatalf("after the let-go: holds %v, spares %v: want one spare, named for telegram:1", holds, spares)
	}
	for _, g := range []*Answers{f, {Paths: p}} { // this process, another
		if all, err := g.Sending(context.Background()); err != nil || len(all) != 0 {
			t.Fatalf("sending %+v, %v: want none, the spare no answer", all, err)
		}
	}
	dir := filepath.Join(p.Chats(), SendingDir)
	was, err := os.Stat(filepath.Join(dir, spares[0]))
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"short", strings.Repeat("a longer answer than any before it ", 8)} {
		id := answerTurn(t, f, nil, "telegram:1", text, int64(4+2*i), at.Add(time.Duration(i+1)*time.Minute), false)
		if id+".json" != spares[0] {
			t.Errorf("hold %d is %s, not the spare named for it, %s", i, id, spares[0])
		}
		is, err := os.Stat(filepath.Join(dir, id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(was, is) {
			t.Errorf("hold %d is a file made anew, not the spare", i)
		}
		all, err := f.Sending(context.Background())
		want := []Answer{{ID: id, Thread: "telegram:1", Text: text, Seq: int64(4 + 2*i), EventTime: at.Add(time.Duration(i+1) * time.Minute)}}
		if diff := cmp.Diff(want, all, cmpopts.IgnoreFields(Answer{}, "At")); err != nil || diff != "" {
			t.Fatalf("sending %v (-want +got):\n%s", err, diff)
		}
		if err := f.letGo(id, spare{size: int(is.Size()), written: time.Now()}); err != nil {
			t.Fatal(err)
		}
		_, spares = sendingFiles(t, p)
		if len(spares) != 1 || !strings.HasPrefix(spares[0], "telegram-1~") {
			t.Fatalf("spares %v: want the one, named for telegram:1", spares)
		}
		if was, err = os.Stat(filepath.Join(dir, spares[0])); err != nil {
			t.Fatal(err)
		}
	}
	id := answerTurn(t, f, nil, "telegram:2", "another conversation's", 2, at, false)
	if is, err := os.Stat(filepath.Join(dir, id+".json")); err != nil || !os.SameFile(was, is) {
		t.Errorf("telegram:2's hold: %v, the spare %v: want telegram:1's spare renamed", err, err == nil && os.SameFile(was, is))
	}
	if err := f.letGo(id, spare{size: 300, written: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, spares = sendingFiles(t, p); len(spares) != 1 || !strings.HasPrefix(spares[0], "telegram-2~") {
		t.Errorf("spares %v: want the one, named for telegram:2", spares)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if holds, spares := sendingFiles(t, p); len(holds)+len(spares) != 0 {
		t.Errorf("after Close: %v %v, want nothing", holds, spares)
	}
	// A hold let go after Close is removed, not kept.
	id = answerTurn(t, f, nil, "telegram:3", "late", 2, at, true)
	if holds, spares := sendingFiles(t, p); len(holds)+len(spares) != 0 {
		t.Errorf("%s let go after Close: %v %v, want nothing", id, holds, spares)
	}
}

// TestSpareTaken: a hold of a new conversation, with no spare of its
// own, takes the spare kept last, of another conversation, renamed to
// its id, rather than make a file; its next hold is its own. The
// conversation whose spare it took makes its own at its next hold,
// rather than take another's in turn.
func TestSpareTaken(t *testing.T) {
	p := agent(t)
	f := &Answers{Paths: p}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	dones := make([]func(), 3)
	for i := range dones {
		_, dones[i] = holdTurn(t, f, nil, "telegram:"+strconv.Itoa(100+i), "an answer", 2, at)
	}
	for _, done := range dones { // telegram:102's kept last
		done()
	}
	last := f.spares.free["telegram-102"][0].id
	c := countCalls(t)
	id := answerTurn(t, f, nil, "telegram:1", "the answer", 2, at, true)
	if c.opens != 0 || c.renames != 2 {
		t.Errorf("the hold and its let-go opened %d files and renamed %d, want 0 and 2: a spare taken", c.opens, c.renames)
	}
	if _, err := os.Stat(filepath.Join(p.Chats(), SendingDir, last+".json")); !os.IsNotExist(err) {
		t.Errorf("telegram:102's spare, kept last: %v, want it taken", err)
	}
	_, spares := sendingFiles(t, p)
	if len(spares) != 3 || !slices.ContainsFunc(spares, func(name string) bool { return strings.HasPrefix(name, "telegram-1~") }) {
		t.Errorf("spares %v: want three, one named for telegram:1 (%s)", spares, id)
	}
	was := *c
	answerTurn(t, f, nil, "telegram:1", "the next answer", 4, at, true)
	if c.opens != was.opens || c.renames != was.renames+1 {
		t.Errorf("telegram:1's next hold and let-go: %d opens, %d renames; want 0 and 1", c.opens-was.opens, c.renames-was.renames)
	}
	was = *c
	answerTurn(t, f, nil, "telegram:102", "its next answer", 4, at, true)
	if c.opens != was.opens+1 || c.renames != was.renames+1 {
		t.Errorf("telegram:102's next hold and let-go: %d opens, %d renames; want 1 and 1, a file made", c.opens-was.opens, c.renames-was.renames)
	}
	if _, spares = sendingFiles(t, p); len(spares) != 4 {
		t.Errorf("spares %v: want four, telegram:100's, 101's, 102's and 1's", spares)
	}
}

// TestSpareNeverResurrects: a spare holds the answer it held last, whose
// event is stored. After a machine's stop a new hold made of it may be
// on the disk with none of its new bytes (the rename committed, the
// write not), or some of them and the rest the old answer's. Neither is
// read as an answer: a recover, single phase or two, hands over nothing,
// where the old answer handed over again would be an answer repeated.
func TestSpareNeverResurrects(t *testing.T) {
	ctx := context.Background()
	p := agent(t)
	f := &Answers{Paths: p}
	c := log.Open(p.Chats())
	conversations := func(context.Context) (store.Conversations, error) { return c, nil }
	const thread = "telegram:5"
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if err := c.Append(ctx, thread, store.Event{Seq: 1, Time: at, Kind: store.KindMessage, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	old := "[offline model] You said: message 12"
	answerTurn(t, f, c, thread, old, 2, at.Add(time.Second), true)
	_, spares := sendingFiles(t, p)
	if len(spares) != 1 {
		t.Fatalf("spares %v: want one", spares)
	}
	dir := filepath.Join(p.Chats(), SendingDir)
	oldBytes, err := os.ReadFile(filepath.Join(dir, spares[0]))
	if err != nil || !bytes.Contains(oldBytes, []byte(old)) {
		t.Fatalf("the spare holds %q, %v: want the answer it held", oldBytes, err)
	}
	// The next message's answer, as long as the last, about to be stored
	// as event 4.
	if err := c.Append(ctx, thread, store.Event{Seq: 3, Time: at.Add(2 * time.Second), Kind: store.KindMessage, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	id, _ := NewID(thread)
	next := Answer{ID: id, Thread: thread, Text: "[offline model] You said: message 13", At: at.Add(3 * time.Second), Seq: 4, EventTime: at.Add(3 * time.Second)}
	newBytes, err := encodeHold(next, len(oldBytes))
	if err != nil || len(newBytes) != len(oldBytes) {
		t.Fatalf("encoded %d bytes, %v: want %d, the spare's", len(newBytes), err, len(oldBytes))
	}
	cut := bytes.Index(newBytes, []byte("message 13")) + len("message 1")
	torn := append(append([]byte{}, newBytes[:cut]...), oldBytes[cut:]...)
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"none of its new bytes", oldBytes},
		{"its id new, its event the old answer's", torn},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, id+".json")
			if err := os.WriteFile(path, c.b, 0o600); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(path)
			if all, err := f.Sending(ctx); err != nil || len(all) != 0 {
				t.Errorf("sending %+v, %v: want none", all, err)
			}
			for _, twoPhase := range []bool{true, false} {
				g := &Answers{Paths: p} // another process: nothing of its own sending
				pass := g.Settle(ctx, conversations, "recover")
				got, err := g.HandOver(ctx, twoPhase, pass)
				if err != nil || len(got) != 0 {
					t.Errorf("two-phase %v: handed over %+v, %v: want nothing", twoPhase, got, err)
				}
			}
		})
	}
	// Whole, it is the new answer's, and no other.
	if err := f.Hold(ctx, next, false); err != nil {
		t.Fatal(err)
	}
	all, err := f.Sending(ctx)
	if diff := cmp.Diff([]Answer{next}, all); err != nil || diff != "" {
		t.Errorf("sending %v (-want +got):\n%s", err, diff)
	}
}

// TestStaleSpareRemoved: a listing removes a spare not written for
// staleSpare (a killed process's: an older Link's .spare- file, or one
// named for a next answer, holding another id's), and keeps a fresh one
// and a hold; the process whose spare was removed, or whose spare is
// near staleSpare, makes its next hold anew.
func TestStaleSpareRemoved(t *testing.T) {
	ctx := context.Background()
	p := agent(t)
	f := &Answers{Paths: p}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	answerTurn(t, f, nil, "telegram:1", "one", 2, at, true)
	_, spares := sendingFiles(t, p)
	dir := filepath.Join(p.Chats(), SendingDir)
	long := time.Now().Add(-staleSpare - time.Minute)
	old := filepath.Join(dir, spares[0])
	b, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	killed := []string{filepath.Join(dir, spareName+"0123456789abcdef"), filepath.Join(dir, mustID(t, "telegram:9")+".json")}
	if err := os.WriteFile(killed[0], []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(killed[1], b, 0o600); err != nil { // a spare: another id's answer
		t.Fatal(err)
	}
	held := mustID(t, "telegram:8")
	if err := f.Hold(ctx, Answer{ID: held, Thread: "telegram:8", Text: "held long"}, false); err != nil {
		t.Fatal(err)
	}
	for _, name := range append(killed, filepath.Join(dir, held+".json")) {
		if err := os.Chtimes(name, long, long); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := (&Answers{Paths: p}).Pending(ctx); err != nil { // another process's listing
		t.Fatal(err)
	}
	for _, name := range killed {
		if _, err := os.Stat(name); !os.IsNotExist(err) {
			t.Errorf("the stale spare %s: %v, want it removed", filepath.Base(name), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, held+".json")); err != nil {
		t.Errorf("the hold not written for as long: %v, want it kept", err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the fresh spare: %v, want it kept", err)
	}
	os.Remove(old) // as a listing that found it stale
	id := answerTurn(t, f, nil, "telegram:1", "two", 4, at, false)
	if all, err := f.Sending(ctx); err != nil || len(all) != 2 || !slices.ContainsFunc(all, func(k Answer) bool { return k.ID == id && k.Text == "two" }) {
		t.Errorf("sending %+v, %v: want the hold made anew beside %s", all, err, held)
	}
	// A spare near staleSpare is written no more: made anew beside it.
	p2 := agent(t)
	f2 := &Answers{Paths: p2}
	answerTurn(t, f2, nil, "telegram:1", "one", 2, at, true)
	f2.spares.free["telegram-1"][0].written = time.Now().Add(-staleSpare / 2)
	c := countCalls(t)
	id = answerTurn(t, f2, nil, "telegram:1", "two", 4, at, false)
	if c.opens != 1 {
		t.Errorf("the hold beside a spare near staleSpare opened %d files, want 1: made anew", c.opens)
	}
	if all, err := f2.Sending(ctx); err != nil || len(all) != 1 || all[0].ID != id {
		t.Errorf("sending %+v, %v: want the hold made anew", all, err)
	}
}

// FuzzParseHold: a sending file reads as an answer of its own id and
// folder or as none, and an answer encoded (padded or not) reads back as
// itself.
func FuzzParseHold(f *testing.F) {
	k := Answer{ID: "telegram-1~ab", Thread: "telegram:1", Text: "hi", At: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Seq: 4}
	b, _ := encodeHold(k, 0)
	f.Add(b, "telegram-1~ab", "hi", 0)
	f.Add([]byte(`{"id":"telegram-1~ab","thread":"telegram:1","text":"older","kept":"2026-11-30T10:00:00Z"}`), "telegram-1~ab", "x", 300)
	f.Add([]byte(`{"id":"telegram-1~ab","thread":"telegram:1","text":"older","kept":"2026-11-30T10:00:00Z","held":true}`), "telegram-1~ab", "x", 300)
	k.ForChat = true
	b, _ = encodeHold(k, 0)
	f.Add(b, "telegram-1~ab", "hi", 0)
	f.Add([]byte(`{"id":"telegram-1~ab","thread":"telegram:1","sum":"00000000"}`), "telegram-1~ab", "", 1)
	f.Add([]byte(`{"id":"telegram-1~ab","thread":"telegram:2"}`), "telegram-1~ab", "\x00", 70)
	f.Fuzz(func(t *testing.T, b []byte, id, text string, size int) {
		if k, ok := parseHold(b, id); ok {
			name, err := contract.ThreadFolder(k.Thread)
			if err != nil || k.ID != id || !strings.HasPrefix(id, name+idSep) || len(id) == len(name+idSep) {
				t.Fatalf("read %+v from %q as %q's", k, b, id)
			}
		}
		k := Answer{ID: "telegram-1~ab", Thread: "telegram:1", Text: text, At: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Seq: 4}
		if got, want := mustAppendAnswer(t, k), mustMarshal(t, k); string(got) != string(want) {
			t.Fatalf("%q encoded as\n%s\nwant json.Marshal's\n%s", text, got, want)
		}
		enc, err := encodeHold(k, size%5000)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parseHold(enc, k.ID)
		if !ok || utf8.ValidString(text) && got.Text != text || got.Seq != 4 {
			t.Fatalf("encoded %+v read back as %+v, %v", k, got, ok)
		}
	})
}

// TestAppendAnswerAsMarshal: a hold's JSON is json.Marshal's, byte for
// byte, for texts of every byte and rune json escapes (controls, quotes,
// <, > and &, invalid UTF-8, U+2028 and U+2029), times in zones, each
// field there or not.
func TestAppendAnswerAsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(65, 29))
	pieces := []string{"a", "é", "\x00", "\x1f", "\b", "\f", "\n", "\r", "\t", `"`, `\\`, "<", ">", "&", "\u2028", "\u2029", "\xff", "\xe2\x80", "日本", "\U0001F600", " ", "\x7f"}
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+30*60), time.FixedZone("y", -8*3600), time.FixedZone("z", 3600+17)}
	for n := range 5000 {
		var text strings.Builder
		for range r.IntN(12) {
			text.WriteString(pieces[r.IntN(len(pieces))])
		}
		k := Answer{ID: "telegram-1~" + strconv.Itoa(n), Thread: "telegram:1", Text: text.String(),
			At: time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(zones[r.IntN(len(zones))])}
		if r.IntN(2) == 0 {
			k.Seq = r.Int64N(1 << 40)
		}
		if r.IntN(2) == 0 {
			k.EventTime = time.Unix(r.Int64N(4e9), r.Int64N(3)*int64(r.IntN(1e9))).In(zones[r.IntN(len(zones))])
		}
		k.ForChat = r.IntN(2) == 0
		if got, want := mustAppendAnswer(t, k), mustMarshal(t, k); string(got) != string(want) {
			t.Fatalf("%+v encoded as\n%s\nwant json.Marshal's\n%s", k, got, want)
		}
	}
	// A time JSON can't hold is refused, as json.Marshal refuses it.
	if _, err := appendAnswer(nil, Answer{At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Error("a year past 9999 encoded")
	}
}

func mustAppendAnswer(t *testing.T, k Answer) []byte {
	t.Helper()
	b, err := appendAnswer(nil, k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustMarshal is json.Marshal's k without its closing brace.
func mustMarshal(t *testing.T, k Answer) []byte {
	t.Helper()
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	return b[:len(b)-1]
}
