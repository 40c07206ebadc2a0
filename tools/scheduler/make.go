package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
)

// Request is the schedule call's arguments: the message, exactly one of
// at, after, every and cron, and optionally the zone, the conversation
// and what a missed occurrence does.
type Request struct {
	Text     string `json:"text" jsonschema:"the message sent to you at its time, as the words you want to read then (say what to do: 'remind the owner to call the bank')"`
	At       string `json:"at,omitempty" jsonschema:"once, at this time: 2026-12-07 09:00 (in the zone) or RFC 3339 with its offset"`
	After    string `json:"after,omitempty" jsonschema:"once, after this delay from now: 90s, 20m, 2h, 3d"`
	Every    string `json:"every,omitempty" jsonschema:"again and again, every interval from now (at least 1m): 30m, 2h, 1d"`
	Cron     string `json:"cron,omitempty" jsonschema:"at each time a cron expression names, in the zone: '0 9 * * 1-5' (minute hour day-of-month month day-of-week) or @daily, @weekly, @monthly"`
	Zone     string `json:"zone,omitempty" jsonschema:"the IANA zone at and cron are in (Europe/Paris); default the scheduler's"`
	Thread   string `json:"thread,omitempty" jsonschema:"the conversation the message goes to (telegram:42, link:chat); default the one you are in"`
	IfMissed string `json:"if_missed,omitempty" jsonschema:"an occurrence missed while the machine was off: late (default: sent once when the scheduler is back, saying it is late) or skip"`
}

// Make is the schedule req asks for, made at now by a call in thread
// whose message had hops, with settings set; a request that breaks a
// rule is refused naming it, nothing made. Its id is new.
func Make(req Request, thread string, hops int, set Settings, now time.Time) (*Schedule, error) {
	s := &Schedule{ID: newID(), Thread: thread, Text: req.Text, Hops: hops + 1, Start: now.UTC()}
	if req.Thread != "" {
		if err := contract.CheckThread(req.Thread); err != nil {
			return nil, fmt.Errorf("thread: %w", err)
		}
		s.Thread = req.Thread
	}
	if err := contract.CheckThread(s.Thread); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Text) == "" {
		return nil, errors.New("text: a reminder says something")
	}
	if len(req.Text) > MaxText {
		return nil, fmt.Errorf("text: at most %d bytes", MaxText)
	}
	if hops+1 > contract.MaxHops {
		return nil, fmt.Errorf("hops: the message being answered is %d hops away, the most there may be", hops)
	}
	switch req.IfMissed {
	case "", "late":
	case "skip":
		s.Skip = true
	default:
		return nil, fmt.Errorf("if_missed %q: late or skip", truncate(req.IfMissed, 16))
	}
	zone := req.Zone
	if zone == "" {
		zone = set.Zone
	}
	loc, err := LoadZone(zone)
	if err != nil {
		return nil, err
	}
	s.Zone = zone
	if s.Zone == "" {
		s.Zone = "Local"
	}
	n := 0
	for _, v := range []string{req.At, req.After, req.Every, req.Cron} {
		if strings.TrimSpace(v) != "" {
			n++
		}
	}
	if n != 1 {
		return nil, errors.New("say when: exactly one of at, after, every and cron")
	}
	switch {
	case strings.TrimSpace(req.At) != "":
		if s.At, err = ParseAt(req.At, loc, now); err != nil {
			return nil, err
		}
		s.At = s.At.UTC()
		s.Next = s.At
	case strings.TrimSpace(req.After) != "":
		d, err := ParseDuration("after", req.After, time.Second)
		if err != nil {
			return nil, err
		}
		s.At = now.Add(d).UTC()
		s.Next = s.At
	case strings.TrimSpace(req.Every) != "":
		d, err := ParseDuration("every", req.Every, LeastEvery)
		if err != nil {
			return nil, err
		}
		s.Every = Duration(d.Truncate(time.Second))
		s.Next = s.Start.Add(time.Duration(s.Every))
	default:
		c, err := ParseCron(req.Cron, loc, now)
		if err != nil {
			return nil, err
		}
		s.Cron = strings.TrimSpace(req.Cron)
		s.Next = c.Next(now).UTC()
	}
	return s, s.check()
}
