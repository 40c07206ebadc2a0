package harness_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness/harnesstest"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// session/list's pages: 250 conversations come in pages of 100, 100 and
// 50, each thread once, in order, the last page with no cursor; a title
// is the first line of the latest message after its sender's name, cut
// at 80 characters, and the thread's own when no message is among its
// last 32 events; a cursor never given is refused naming the rule.
func TestListSessionsPages(t *testing.T) {
	r := newRig(t)
	p := r.Paths()
	d := log.Open(p.Chats())
	at := time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC)
	for i := range 250 {
		thread := fmt.Sprintf("discord:%d", 1000+i)
		msg := store.Event{Seq: 1, Kind: store.KindMessage, Text: fmt.Sprintf("message %d\nits second line", i), Time: at}
		if err := d.Append(t.Context(), thread, msg); err != nil {
			t.Fatal(err)
		}
	}
	long := store.Event{Seq: 2, Kind: store.KindMessage, From: "person:discord:9", FromName: "Ada", Text: strings.Repeat("word ", 40), Time: at.Add(time.Minute)}
	if err := d.Append(t.Context(), "discord:1000", long); err != nil {
		t.Fatal(err)
	}
	for seq := int64(2); seq <= 34; seq++ {
		if err := d.Append(t.Context(), "discord:1001", store.Event{Seq: seq, Kind: store.KindAnswer, Text: "more", Time: at}); err != nil {
			t.Fatal(err)
		}
	}

	var all []acp.SessionInfo
	var sizes []int
	cursor := ""
	for {
		res, err := r.Harness.ListSessions(t.Context(), testAgent, cursor)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, res.Sessions...)
		sizes = append(sizes, len(res.Sessions))
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if fmt.Sprint(sizes) != "[100 100 50]" {
		t.Fatalf("pages of %v, want 100, 100 and 50", sizes)
	}
	for i, s := range all {
		if want := fmt.Sprintf("discord:%d", 1000+i); s.SessionID != want {
			t.Fatalf("session #%d is %s, want %s", i, s.SessionID, want)
		}
	}
	if got := all[0].Title; got != "Ada: "+strings.Repeat("word ", 14)+"word…" || len([]rune(got)) != 80 {
		t.Errorf("the title of a long message from Ada: %q (%d characters)", got, len([]rune(got)))
	}
	if all[0].UpdatedAt != "2026-12-07T21:01:00Z" {
		t.Errorf("updatedAt %q, want its latest event's time", all[0].UpdatedAt)
	}
	if all[1].Title != "discord:1001" {
		t.Errorf("a conversation whose message is past its last 32 events titled %q, want its thread", all[1].Title)
	}
	if all[2].Title != "message 2" {
		t.Errorf("title %q, want the message's first line", all[2].Title)
	}
	for _, bad := range []string{"x", "bm90IGEgdGhyZWFk", "ZGlzY29yZDoxMDAw=="} {
		_, err := r.Harness.ListSessions(t.Context(), testAgent, bad)
		var re *contract.RuleError
		if err == nil || !errors.As(err, &re) || re.Field != "cursor" {
			t.Errorf("cursor %q: %v, want refused naming the cursor", bad, err)
		}
	}
}

// BenchmarkListSessions is one session/list page of an agent with 1,000
// conversations: the folder's names read, 100 of them titled from their
// latest events.
func BenchmarkListSessions(b *testing.B) {
	r := &rig{harnesstest.New(b)}
	d := log.Open(r.Paths().Chats())
	at := time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC)
	for i := range 1000 {
		e := store.Event{Seq: 1, Kind: store.KindMessage, Text: fmt.Sprintf("message %d", i), Time: at}
		if err := d.Append(b.Context(), fmt.Sprintf("discord:%d", 10000+i), e); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := r.Harness.ListSessions(b.Context(), testAgent, "")
		if err != nil || len(res.Sessions) != 100 {
			b.Fatalf("%d sessions, %v", len(res.Sessions), err)
		}
	}
}
