package scheduler

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
)

// FuzzMake proves a schedule call's arguments, as a model writes them,
// never panic Make, and that what it makes is a schedule a file of it
// reads back the same, whose next time is after its making, at most ten
// years on (a little more for a cron's first match), and is one of its
// occurrences.
func FuzzMake(f *testing.F) {
	for _, c := range [][6]string{
		{"call the bank", "2026-12-07 09:00", "", "", "", ""},
		{"x", "2026-12-07T09:00:00+01:00", "", "", "", "Europe/Paris"},
		{"x", "", "90s", "", "", ""},
		{"x", "", "3d12h", "", "", ""},
		{"x", "", "", "1h", "", ""},
		{"x", "", "", "", "0 9 * * 1-5", "America/New_York"},
		{"x", "", "", "", "@daily", "Local"},
		{"x", "", "", "", "*/5 * * * *", "UTC"},
		{"x", "", "", "", "0 0 30 2 *", ""},
		{"x", "", "", "", "CRON_TZ=UTC 0 9 * * *", ""},
		{"", "", "1h", "", "", "Mars/Base"},
	} {
		f.Add(c[0], c[1], c[2], c[3], c[4], c[5], "telegram:5", "skip")
	}
	now := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, text, at, after, every, cron, zone, thread, missed string) {
		req := Request{Text: text, At: at, After: after, Every: every, Cron: cron, Zone: zone, Thread: thread, IfMissed: missed}
		s, err := Make(req, "link:chat", 0, Settings{Zone: "UTC", MaxSchedules: 10}, now)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a refusal that says nothing")
			}
			return
		}
		if err := s.check(); err != nil {
			t.Fatalf("made %+v, which breaks %v", s, err)
		}
		if contract.CheckThread(s.Thread) != nil || !s.Next.After(now) || s.Next.Sub(now) > MostAhead+366*24*time.Hour {
			t.Fatalf("made %+v", s)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back Schedule
		if err := json.Unmarshal(b, &back); err != nil || back.check() != nil || !back.Next.Equal(s.Next) || back.Cron != s.Cron || back.Every != s.Every || !back.At.Equal(s.At) {
			t.Fatalf("%+v read back as %+v, %v", s, back, err)
		}
		if first, ok := back.after(now); !ok || !first.Equal(s.Next) {
			t.Fatalf("its first occurrence after its making is %v, not its next %v", first, s.Next)
		}
	})
}

// FuzzSettings proves config.json's bytes never panic ParseSettings, and
// that what it takes has a zone that loads and a count within bounds.
func FuzzSettings(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"scheduler":{"zone":"Europe/Paris","max_schedules":5}}`, `{"scheduler":{"zone":"nowhere"}}`, `{"scheduler":{"max_schedules":0}}`, `{"scheduler":{"x":1}}`, `{"scheduler":[]}`, `{"scheduler":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSettings(b)
		if err != nil {
			if !strings.Contains(err.Error(), "config.json") {
				t.Fatalf("a refusal naming no file: %v", err)
			}
			return
		}
		if _, err := LoadZone(s.Zone); err != nil || s.MaxSchedules < 1 || s.MaxSchedules > MostSchedules {
			t.Fatalf("took %+v", s)
		}
	})
}

// FuzzScheduleFile proves a schedule's file, whatever it holds, never
// panics reading it, and that one taken passes every rule of a schedule
// and has a next occurrence the scheduler can reckon from.
func FuzzScheduleFile(f *testing.F) {
	f.Add([]byte(`{"id":"0123456789","thread":"telegram:5","text":"x","hops":1,"every":3600,"zone":"UTC","start":"2026-12-07T08:00:00Z","next":"2026-12-07T09:00:00Z"}`))
	f.Add([]byte(`{"id":"0123456789","thread":"telegram:5","text":"x","hops":1,"cron":"0 9 * * *","zone":"Europe/Paris","start":"2026-12-07T08:00:00Z","next":"2026-12-08T08:00:00Z"}`))
	f.Add([]byte(`{"id":"0123456789","thread":"telegram:5","text":"x","hops":1,"every":1,"zone":"UTC","start":"2026-12-07T08:00:00Z","next":"2026-12-07T09:00:00Z"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Schedule
		if json.Unmarshal(b, &s) != nil || s.check() != nil {
			return
		}
		if next, ok := s.after(s.Next); ok && !next.After(s.Next) {
			t.Fatalf("%+v: the occurrence after %v is %v", s, s.Next, next)
		}
		_ = s.messageText(s.Next, s.Next.Add(2*time.Hour))
	})
}
