package scheduler

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
)

// Schedule is one schedule: a message sent into a conversation at its
// times, from schedule:<ID>. It is kept as it is written, one file each
// (Book), and Next, the next occurrence not yet sent, moves on once an
// occurrence's message is recorded to send.
type Schedule struct {
	ID     string `json:"id"`
	Thread string `json:"thread"` // the conversation its messages go to
	Text   string `json:"text"`
	// Hops are its messages': one past the hops of the message that
	// set it, since each is sent by the agent on its own.
	Hops int `json:"hops"`

	At    time.Time `json:"at,omitzero"`    // once, at this time
	Every Duration  `json:"every,omitzero"` // every interval from Start
	Cron  string    `json:"cron,omitempty"` // at each time the expression names
	Zone  string    `json:"zone"`           // the zone its times are in: an IANA name, or Local
	// Skip: an occurrence missed while the scheduler was down is
	// skipped; else it is sent once, late, saying so.
	Skip bool `json:"skip,omitempty"`

	Start time.Time `json:"start"` // when it was set
	Next  time.Time `json:"next"`  // the next occurrence not yet sent
	Sent  int       `json:"sent"`  // occurrences sent so far
}

// Duration is a time.Duration kept as whole seconds.
type Duration time.Duration

// MarshalJSON writes d in seconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprint(int64(time.Duration(d) / time.Second))), nil
}

// UnmarshalJSON reads seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var n int64
	if _, err := fmt.Sscan(string(b), &n); err != nil || n < 0 || n > int64(MostAhead/time.Second) {
		return errors.New("every is whole seconds")
	}
	*d = Duration(time.Duration(n) * time.Second)
	return nil
}

// Bounds of a schedule.
const (
	// MaxText bounds a schedule's message, in bytes.
	MaxText = 16 << 10
	// idLen is how many hex digits a schedule's id has.
	idLen = 10
)

// newID is a schedule's id: idLen random hex digits.
func newID() string {
	var b [idLen / 2]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// checkID refuses an id that isn't one newID makes: ids name files.
func checkID(id string) error {
	if len(id) != idLen {
		return fmt.Errorf("schedule %q: a schedule's id is %d hex digits, as the schedule call answered it", truncate(id, 32), idLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return fmt.Errorf("schedule %q: a schedule's id is %d hex digits, as the schedule call answered it", truncate(id, 32), idLen)
		}
	}
	return nil
}

// check says which rule s breaks, if any: what a schedule's file read
// back must hold too.
func (s *Schedule) check() error {
	if err := checkID(s.ID); err != nil {
		return err
	}
	if err := contract.CheckThread(s.Thread); err != nil {
		return err
	}
	if strings.TrimSpace(s.Text) == "" || len(s.Text) > MaxText {
		return fmt.Errorf("text: a reminder says something, at most %d bytes", MaxText)
	}
	if s.Hops < 1 || s.Hops > contract.MaxHops {
		return fmt.Errorf("hops: 1 to %d", contract.MaxHops)
	}
	n := 0
	if !s.At.IsZero() {
		n++
	}
	if s.Every != 0 {
		n++
		if time.Duration(s.Every) < LeastEvery {
			return fmt.Errorf("every: at least %v", LeastEvery)
		}
	}
	if s.Cron != "" {
		n++
	}
	if n != 1 {
		return errors.New("a schedule is one of at, after, every or cron")
	}
	if s.Start.IsZero() || s.Next.IsZero() {
		return errors.New("a schedule has its start and its next time")
	}
	for _, t := range []time.Time{s.Start, s.Next, s.At} {
		if !t.IsZero() && (t.Year() < 2000 || t.Year() > 2200) {
			return errors.New("a schedule's times are between the years 2000 and 2200")
		}
	}
	if s.Next.Before(s.Start) {
		return errors.New("a schedule's next time is after its start")
	}
	loc, err := LoadZone(s.Zone)
	if err != nil {
		return err
	}
	if s.Cron != "" {
		if _, err := ParseCron(s.Cron, loc, s.Next.Add(-time.Second)); err != nil {
			return err
		}
	}
	return nil
}

// location is s's zone (checked when s was made or read).
func (s *Schedule) location() *time.Location {
	loc, err := LoadZone(s.Zone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// after is s's first occurrence after t; ok is false for a schedule
// that has none (once, and sent).
func (s *Schedule) after(t time.Time) (next time.Time, ok bool) {
	switch {
	case !s.At.IsZero():
		if s.At.After(t) {
			return s.At, true
		}
		return time.Time{}, false
	case s.Every != 0:
		every := time.Duration(s.Every)
		if t.Before(s.Start) {
			return s.Start.Add(every), true
		}
		n := t.Sub(s.Start)/every + 1
		return s.Start.Add(n * every), true
	default:
		c, err := ParseCron(s.Cron, s.location(), t)
		if err != nil {
			return time.Time{}, false
		}
		next := c.Next(t)
		return next, !next.IsZero()
	}
}

// missed counts s's occurrences from due up to now, due's included: how
// many a scheduler down missed (at most 1000 counted).
func (s *Schedule) missed(due, now time.Time) int {
	n := 0
	for t, ok := due, true; ok && !t.After(now) && n < 1000; t, ok = s.after(t) {
		n++
	}
	return n
}

// what says when s sends, in words: "once at Mon 7 Dec 2026 09:00 CET",
// "every 2h0m0s", "at cron 0 9 * * 1 (Europe/Paris)".
func (s *Schedule) what() string {
	switch {
	case !s.At.IsZero():
		return "once at " + s.At.In(s.location()).Format(sayLayout)
	case s.Every != 0:
		return "every " + time.Duration(s.Every).String()
	default:
		return fmt.Sprintf("at cron %q (%s)", s.Cron, s.Zone)
	}
}

// occurrenceID is the message id of s's occurrence due: the same at
// every try, after any crash, so the harness stores it once.
func occurrenceID(id string, due time.Time) string {
	return "schedule:" + id + "@" + due.UTC().Format("20060102T150405Z")
}

// messageText is the words of s's occurrence due, sent at now: its text,
// and, when it is late (lateAfter past due), when it was due and how
// many occurrences it stands for.
func (s *Schedule) messageText(due, now time.Time) string {
	if now.Sub(due) < lateAfter {
		return s.Text
	}
	loc := s.location()
	note := fmt.Sprintf("(Late: due %s, sent %s; the scheduler wasn't running then.", due.In(loc).Format(sayLayout), now.In(loc).Format(sayLayout))
	if n := s.missed(due, now); n > 1 {
		note += fmt.Sprintf(" It stands for the %d occurrences missed.", n)
	}
	return s.Text + "\n\n" + note + ")"
}

// lateAfter is how long past its time an occurrence is sent before it
// says it is late.
const lateAfter = time.Minute
