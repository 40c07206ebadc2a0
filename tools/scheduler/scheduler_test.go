package scheduler

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness/harnesstest"
)

var t0 = time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)

// A reminder after a delay is sent at its time, once, from
// schedule:<id>, hops one past its setter's, into the conversation it was
// set in, and is gone then; nothing is sent before (TestReminderOnce).
func TestReminderOnce(t *testing.T) {
	r := harnesstest.New(t)
	answers(r, 1)
	clock := newFakeClock(t0)
	f := &fired{}
	s := openAt(t, rigPaths(t, r), clock, r, f, testSettings)
	sc, err := s.Add(t.Context(), Request{Text: "call the bank", After: "2s"}, "telegram:5", 0)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(1999 * time.Millisecond)
	if len(f.list()) != 0 {
		t.Fatal("sent before its time")
	}
	clock.Advance(time.Millisecond)
	waitIdle(t, s)
	got := scheduled(r, "telegram:5")
	if len(got) != 1 || got[0].From != "schedule:"+sc.ID || got[0].Hops != 1 || got[0].Text != "call the bank" || got[0].MessageID != occurrenceID(sc.ID, t0.Add(2*time.Second)) {
		t.Fatalf("stored %+v", got)
	}
	if n := len(s.List()); n != 0 {
		t.Fatalf("%d schedules left after a reminder sent once", n)
	}
	if _, err := os.Stat(filepath.Join(Dir(rigPaths(t, r)), "schedules", sc.ID+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("its file is still there: %v", err)
	}
	clock.Advance(48 * time.Hour)
	if n := len(f.list()); n != 1 {
		t.Fatalf("sent %d times", n)
	}
}

// A schedule every interval is sent at each, and a scheduler holds one
// timer at a time, set for the soonest of its schedules (TestEvery).
func TestEvery(t *testing.T) {
	r := harnesstest.New(t)
	answers(r, 3)
	clock := newFakeClock(t0)
	f := &fired{}
	s := openAt(t, rigPaths(t, r), clock, r, f, testSettings)
	if _, err := s.Add(t.Context(), Request{Text: "stretch", Every: "1h"}, "link:chat", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(t.Context(), Request{Text: "later", After: "10d"}, "link:chat", 0); err != nil {
		t.Fatal(err)
	}
	if n := clock.pending(); n != 1 {
		t.Fatalf("%d timers armed, want one", n)
	}
	clock.Advance(3*time.Hour + time.Minute)
	want := []time.Time{t0.Add(time.Hour), t0.Add(2 * time.Hour), t0.Add(3 * time.Hour)}
	if got := f.list(); len(got) != 3 || !got[0].Equal(want[0]) || !got[1].Equal(want[1]) || !got[2].Equal(want[2]) {
		t.Fatalf("sent at %v, want %v", got, want)
	}
	waitIdle(t, s)
	if n := len(scheduled(r, "link:chat")); n != 3 {
		t.Fatalf("%d messages stored", n)
	}
	if n := clock.pending(); n != 1 {
		t.Fatalf("%d timers armed, want one", n)
	}
}

// An occurrence missed while the scheduler was down is sent once at its
// start, saying it is late and how many it stands for; one whose schedule
// says skip is not sent; each moves on to its next time after now
// (TestMissedWhileDown).
func TestMissedWhileDown(t *testing.T) {
	r := harnesstest.New(t)
	answers(r, 2)
	clock := newFakeClock(t0)
	p := rigPaths(t, r)
	s := openAt(t, p, clock, nil, nil, testSettings)
	late, err := s.Add(t.Context(), Request{Text: "drink water", Every: "1h"}, "telegram:5", 0)
	if err != nil {
		t.Fatal(err)
	}
	skip, err := s.Add(t.Context(), Request{Text: "stand up", Every: "1h", IfMissed: "skip"}, "telegram:6", 0)
	if err != nil {
		t.Fatal(err)
	}
	once, err := s.Add(t.Context(), Request{Text: "call the bank", At: "2026-12-07 09:30"}, "telegram:7", 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	clock.Set(t0.Add(5*time.Hour + 10*time.Minute)) // down from 08:00 to 13:10
	f := &fired{}
	s = openAt(t, p, clock, r, f, testSettings)
	clock.Advance(0)
	waitIdle(t, s)
	got := scheduled(r, "telegram:5")
	if len(got) != 1 || !strings.Contains(got[0].Text, "drink water\n\n(Late: due Mon 7 Dec 2026 09:00 UTC, sent Mon 7 Dec 2026 13:10 UTC") || !strings.Contains(got[0].Text, "the 5 occurrences missed") {
		t.Fatalf("the missed occurrence stored as %+v", got)
	}
	if n := len(scheduled(r, "telegram:6")); n != 0 {
		t.Fatalf("a schedule that skips what it missed sent %d", n)
	}
	if got := scheduled(r, "telegram:7"); len(got) != 1 || !strings.Contains(got[0].Text, "Late: due Mon 7 Dec 2026 09:30 UTC") {
		t.Fatalf("a reminder missed stored as %+v", got)
	}
	for _, sc := range s.List() {
		if !sc.Next.Equal(t0.Add(6 * time.Hour)) {
			t.Errorf("%s next at %v, want 14:00", sc.ID, sc.Next)
		}
	}
	if len(s.List()) != 2 || late.ID == skip.ID || once.ID == "" {
		t.Fatalf("schedules left: %+v", s.List())
	}
}

// A daily 09:00 in a zone that changes its clocks is sent at 09:00 local
// on the day before, of and after each change, once a day (Europe/Paris:
// forward on 29 March 2026, back on 25 October 2026) (TestDailyAcrossDST).
func TestDailyAcrossDST(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	for _, start := range []time.Time{
		time.Date(2026, 3, 27, 12, 0, 0, 0, paris),
		time.Date(2026, 10, 23, 12, 0, 0, 0, paris),
	} {
		clock := newFakeClock(start)
		f := &fired{}
		home := t.TempDir()
		s := openAt(t, pathsIn(t, home), clock, nil, f, Settings{Zone: "Europe/Paris", MaxSchedules: 10})
		if _, err := s.Add(t.Context(), Request{Text: "plan the day", Cron: "0 9 * * *"}, "link:chat", 0); err != nil {
			t.Fatal(err)
		}
		clock.Advance(4 * 24 * time.Hour)
		got := f.list()
		if len(got) != 4 {
			t.Fatalf("from %v: sent %d times in four days: %v", start, len(got), got)
		}
		for i, due := range got {
			local := due.In(paris)
			want := time.Date(start.Year(), start.Month(), start.Day()+1+i, 9, 0, 0, 0, paris)
			if local.Hour() != 9 || local.Minute() != 0 || !due.Equal(want) {
				t.Errorf("from %v: occurrence %d at %v, want %v", start, i, local, want)
			}
		}
		s.Close()
	}
}

// Each bad request is refused naming its rule, and nothing is kept: a
// cron expression that isn't one, a time in the past, a zone that doesn't
// exist, a thread the contract refuses, none or two of at/after/every/cron,
// an interval under a minute, an empty text (TestBadRequests).
func TestBadRequests(t *testing.T) {
	clock := newFakeClock(t0)
	p := pathsIn(t, t.TempDir())
	s := openAt(t, p, clock, nil, nil, testSettings)
	for _, c := range []struct {
		req  Request
		rule string
	}{
		{Request{Text: "x", Cron: "every monday"}, "isn't one"},
		{Request{Text: "x", Cron: "61 * * * *"}, "isn't one"},
		{Request{Text: "x", Cron: "0 0 30 2 *"}, "no time ever matches"},
		{Request{Text: "x", Cron: "CRON_TZ=UTC 0 9 * * *"}, "zone is said as zone"},
		{Request{Text: "x", Cron: "@every 5m"}, "said as every"},
		{Request{Text: "x", At: "2026-12-07 07:59"}, "in the past"},
		{Request{Text: "x", At: "2026-12-07T08:00:00Z"}, "in the past"},
		{Request{Text: "x", At: "tomorrow"}, "isn't a time"},
		{Request{Text: "x", At: "2040-01-01 09:00"}, "ten years"},
		{Request{Text: "x", After: "5 minutes"}, "isn't a duration"},
		{Request{Text: "x", After: "-5m"}, "isn't a duration"},
		{Request{Text: "x", Every: "30s"}, "1m0s to ten years"},
		{Request{Text: "x", After: "1h", Zone: "Mars/Olympus"}, "doesn't exist"},
		{Request{Text: "x", After: "1h", Zone: "../../etc/passwd"}, "IANA zone"},
		{Request{Text: "x", After: "1h", Thread: "link:../../x"}, "thread"},
		{Request{Text: "x", After: "1h", Thread: "nope"}, "thread"},
		{Request{Text: "x"}, "exactly one of"},
		{Request{Text: "x", After: "1h", Every: "1h"}, "exactly one of"},
		{Request{Text: "  ", After: "1h"}, "says something"},
		{Request{Text: strings.Repeat("x", MaxText+1), After: "1h"}, "at most"},
		{Request{Text: "x", After: "1h", IfMissed: "later"}, "late or skip"},
	} {
		_, err := s.Add(t.Context(), c.req, "telegram:5", 0)
		if err == nil || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("%+v: %v, want a refusal saying %q", c.req, err, c.rule)
		}
	}
	if n := len(s.List()); n != 0 {
		t.Fatalf("%d schedules kept of bad requests", n)
	}
	entries, _ := os.ReadDir(filepath.Join(Dir(p), "schedules"))
	if len(entries) != 0 {
		t.Fatalf("%d files kept of bad requests", len(entries))
	}
}

// The agent's most schedules: with ten thousand kept (written as a
// scheduler writes them, unsynced, for the test's time), the next is
// refused naming the setting, nothing of it kept; one cancelled makes
// room (TestTenThousandSchedules).
func TestTenThousandSchedules(t *testing.T) {
	clock := newFakeClock(t0)
	p := pathsIn(t, t.TempDir())
	first := writeSchedules(t, p, DefaultMaxSchedules, t0.Add(time.Hour))[0]
	s := openAt(t, p, clock, nil, nil, testSettings)
	if n := len(s.List()); n != DefaultMaxSchedules {
		t.Fatalf("%d schedules read", n)
	}
	_, err := s.Add(t.Context(), Request{Text: "x", After: "1h"}, "telegram:5", 0)
	if !errors.Is(err, ErrTooMany) || !strings.Contains(err.Error(), "at most 10000 schedules") || !strings.Contains(err.Error(), "max_schedules") {
		t.Fatalf("schedule 10,001: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(Dir(p), "schedules")); len(entries) != DefaultMaxSchedules {
		t.Fatalf("%d files after a refusal", len(entries))
	}
	if _, err := s.Cancel(first); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(t.Context(), Request{Text: "x", After: "1h"}, "telegram:5", 0); err != nil {
		t.Fatalf("after a cancel: %v", err)
	}
}

// Cancel forgets a schedule, its file too; an id that isn't one is
// refused (TestCancel).
func TestCancel(t *testing.T) {
	clock := newFakeClock(t0)
	p := pathsIn(t, t.TempDir())
	f := &fired{}
	s := openAt(t, p, clock, nil, f, testSettings)
	sc, err := s.Add(t.Context(), Request{Text: "x", Every: "1h"}, "telegram:5", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(sc.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(sc.ID); !errors.Is(err, ErrNoSchedule) {
		t.Fatalf("cancelled twice: %v", err)
	}
	if _, err := s.Cancel("../../x"); err == nil || !strings.Contains(err.Error(), "hex digits") {
		t.Fatalf("a bad id: %v", err)
	}
	clock.Advance(5 * time.Hour)
	if n := len(f.list()); n != 0 {
		t.Fatalf("a cancelled schedule sent %d", n)
	}
	if clock.pending() != 0 {
		t.Fatal("a timer is armed with no schedule")
	}
}
