package scheduler

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/robfig/cron/v3"
)

// When a schedule's message is sent: once at a time (At), every interval
// from its start (Every), or at each time a cron expression names
// (Cron), in its zone (Zone, an IANA name, "Local" for the machine's).

// Bounds of a schedule's times.
const (
	// LeastEvery is the shortest interval of a repeating schedule.
	LeastEvery = time.Minute
	// MostAhead is how far ahead a schedule's first time may be.
	MostAhead = 10 * 366 * 24 * time.Hour
	// maxCron bounds a cron expression, in bytes.
	maxCron = 128
	// maxZone bounds a zone's name, in bytes.
	maxZone = 64
)

// cronParser reads the standard five fields (minute, hour, day of month,
// month, day of week) and the descriptors @yearly, @monthly, @weekly,
// @daily, @hourly: robfig/cron's, as crontab(5) says them.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron reads a cron expression for zone loc, refused naming the
// rule: not five fields or a descriptor, a zone said inside it (the zone
// is the schedule's), @every (an interval is said as every), or one no
// time ever matches (the 30th of February).
func ParseCron(expr string, loc *time.Location, now time.Time) (cron.Schedule, error) {
	expr = strings.TrimSpace(expr)
	switch {
	case expr == "" || len(expr) > maxCron || !utf8.ValidString(expr):
		return nil, fmt.Errorf("cron: an expression of 1 to %d characters", maxCron)
	case strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ="):
		return nil, errors.New("cron: the zone is said as zone, not inside the expression")
	case strings.HasPrefix(expr, "@every"):
		return nil, errors.New("cron: an interval is said as every (\"every\": \"2h\"), not @every")
	}
	s, err := cronParser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("cron %q isn't one: five fields (minute hour day-of-month month day-of-week, as crontab says them) or @daily, @weekly, @monthly, @yearly, @hourly: %v", truncate(expr, 64), err)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("cron %q isn't one: five fields or a descriptor", truncate(expr, 64))
	}
	spec.Location = loc
	if spec.Next(now).IsZero() {
		return nil, fmt.Errorf("cron %q: no time ever matches it", truncate(expr, 64))
	}
	return spec, nil
}

// LoadZone is the zone named: an IANA name (Europe/Paris), UTC, or
// "Local", the machine's; "" is the machine's too. One that doesn't
// exist is refused naming it.
func LoadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return time.Local, nil
	}
	if len(name) > maxZone || !utf8.ValidString(name) || strings.ContainsAny(name, "\x00\\") || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return nil, fmt.Errorf("zone %q: an IANA zone's name (Europe/Paris, America/New_York, UTC)", truncate(name, maxZone))
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("zone %q doesn't exist: an IANA zone's name (Europe/Paris, America/New_York, UTC)", truncate(name, maxZone))
	}
	return loc, nil
}

// atLayouts are the ways a time may be said: RFC 3339 with its offset,
// or a wall time in the schedule's zone.
var atLayouts = []string{"2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02T15:04:05"}

// ParseAt reads a time: RFC 3339 (2026-12-07T09:00:00+01:00), or a wall
// time in loc (2026-12-07 09:00). One that isn't, or isn't after now,
// or is past MostAhead, is refused naming the rule.
func ParseAt(s string, loc *time.Location, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		for _, layout := range atLayouts {
			if t, err = time.ParseInLocation(layout, s, loc); err == nil {
				break
			}
		}
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("at %q isn't a time: 2026-12-07 09:00 (in the schedule's zone) or RFC 3339 (2026-12-07T09:00:00+01:00)", truncate(s, 64))
	}
	if !t.After(now) {
		return time.Time{}, fmt.Errorf("at %s is in the past (it is %s now): a schedule's time is to come", t.In(loc).Format(sayLayout), now.In(loc).Format(sayLayout))
	}
	if t.Sub(now) > MostAhead {
		return time.Time{}, fmt.Errorf("at %s: at most ten years ahead", t.In(loc).Format(sayLayout))
	}
	return t, nil
}

// ParseDuration reads an interval or a delay as Go says one (90s, 15m,
// 2h30m) or in days (3d, 1d12h), at least least and at most MostAhead.
func ParseDuration(field, s string, least time.Duration) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		var n int
		if _, err := fmt.Sscanf(s[:i], "%d", &n); err != nil || fmt.Sprint(n) != s[:i] || n < 0 || n > 3660 {
			return 0, fmt.Errorf("%s %q isn't a duration: 90s, 15m, 2h30m, 3d", field, truncate(s, 32))
		}
		days = time.Duration(n) * 24 * time.Hour
		s = s[i+1:]
		if s == "" {
			s = "0s"
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > math.MaxInt64-days {
		return 0, fmt.Errorf("%s %q isn't a duration: 90s, 15m, 2h30m, 3d", field, truncate(s, 32))
	}
	d += days
	if d < least || d > MostAhead {
		return 0, fmt.Errorf("%s %v: %v to ten years", field, d, least)
	}
	return d, nil
}

// sayLayout is how a schedule's times are said to the model and the owner.
const sayLayout = "Mon 2 Jan 2006 15:04 MST"

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
