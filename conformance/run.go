package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// Status is how a check ended.
type Status int

const (
	Pass   Status = iota
	Fail          // the endpoint broke the rule
	NotRun        // the target lacks a hook the check needs; never a pass
)

func (s Status) String() string {
	switch s {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	default:
		return "NOT RUN"
	}
}

// Result is one named check's outcome.
type Result struct {
	Name   string
	Rule   string // the rule's own words, from spec/endpoint.txt
	Status Status
	Seen   string // for Fail, what was seen; for NotRun, what it lacks
}

// String is the result's line: PASS name — rule, or FAIL name — rule: seen.
func (r Result) String() string {
	if r.Status == Pass {
		return fmt.Sprintf("%s %s — %s", r.Status, r.Name, r.Rule)
	}
	return fmt.Sprintf("%s %s — %s: %s", r.Status, r.Name, r.Rule, r.Seen)
}

// notRun is a check's way to say it could not be run: the target lacks
// what it needs, or the system can't say what it would read.
type notRun struct{ why string }

func (n *notRun) Error() string { return n.why }

func skip(format string, args ...any) error { return &notRun{why: fmt.Sprintf(format, args...)} }

// Names lists the checks, in the order they run.
func Names() []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = c.name
	}
	return out
}

// Check runs every check against target, one after another, and says
// each one's result in order. An error is a target the kit can't check
// at all (no URL, no key).
func Check(ctx context.Context, target Target) ([]Result, error) {
	if err := target.validate(); err != nil {
		return nil, err
	}
	k := newKit(target)
	results := make([]Result, 0, len(checks))
	for _, c := range checks {
		results = append(results, k.runCheck(ctx, c))
	}
	return results, nil
}

// Run runs every check against target as a subtest of t named after it:
// a failed check fails its subtest, a check not run skips it. An
// endpoint's own tests call it, as testing/fstest's callers do.
func Run(t *testing.T, target Target) {
	t.Helper()
	if err := target.validate(); err != nil {
		t.Fatal(err)
	}
	k := newKit(target)
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			r := k.runCheck(t.Context(), c)
			switch r.Status {
			case Fail:
				t.Errorf("%s: %s", r.Rule, r.Seen)
			case NotRun:
				t.Skipf("not run: %s", r.Seen)
			}
		})
	}
}

// runCheck runs one check, bounded by the target's timeout.
func (k *kit) runCheck(ctx context.Context, c check) Result {
	r := Result{Name: c.name, Rule: c.rule}
	if c.needs != nil {
		if missing := c.needs(k.t); missing != "" {
			r.Status, r.Seen = NotRun, "the target offers no "+missing
			return r
		}
	}
	ctx, cancel := context.WithTimeout(ctx, k.t.timeout())
	defer cancel()
	err := c.run(ctx, k)
	var nr *notRun
	switch {
	case err == nil:
		r.Status = Pass
	case errors.As(err, &nr):
		r.Status, r.Seen = NotRun, nr.why
	default:
		r.Status, r.Seen = Fail, err.Error()
	}
	return r
}

// check is one rule of the spec, checked on the wire.
type check struct {
	name string
	rule string // the rule's own words
	// needs names the hook the target lacks, or "" when it has all the
	// check needs.
	needs func(Target) string
	run   func(ctx context.Context, k *kit) error
}
