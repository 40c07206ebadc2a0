package conformance_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/conformance"
	"github.com/lnk-dev/link/conformance/reference"
)

func start(t *testing.T, f reference.Faults) *reference.Endpoint {
	t.Helper()
	e, err := reference.Start(t.Context(), reference.Options{Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close reference endpoint: %v", err)
		}
	})
	return e
}

// TestReference runs the kit as an endpoint's own tests do: every check
// runs against the reference endpoint, and passes.
func TestReference(t *testing.T) {
	e := start(t, reference.Faults{})
	conformance.Run(t, e.Target())
}

// TestReferenceResults: every check runs and passes, none left not run.
func TestReferenceResults(t *testing.T) {
	e := start(t, reference.Faults{})
	results, err := conformance.Check(t.Context(), e.Target())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(results), conformance.Names(); !slices.Equal(got, want) {
		t.Fatalf("results %v, want one per check %v", got, want)
	}
	for _, r := range results {
		if r.Status != conformance.Pass {
			t.Errorf("%s", r)
		}
		if !strings.HasPrefix(r.String(), "PASS "+r.Name+" — ") {
			t.Errorf("line %q", r)
		}
	}
}

// TestBroken: each broken variant of the reference endpoint fails exactly
// the checks of the rule it breaks, and passes every other.
func TestBroken(t *testing.T) {
	for _, c := range []struct {
		name   string
		faults reference.Faults
		fail   []string
	}{
		{"wrong proof", reference.Faults{WrongProof: true}, []string{"proof"}},
		{"Nagle left on", reference.Faults{Nagle: true}, []string{"tcp-nodelay"}},
		{"no _link/taken", reference.Faults{NoTaken: true}, []string{"taken"}},
		{"invalid from accepted", reference.Faults{AcceptBadFrom: true}, []string{"meta-from"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, c.faults)
			results, err := conformance.Check(t.Context(), e.Target())
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, r := range results {
				switch r.Status {
				case conformance.Fail:
					failed = append(failed, r.Name)
					if !strings.HasPrefix(r.String(), "FAIL "+r.Name+" — "+r.Rule+": ") || r.Seen == "" {
						t.Errorf("line %q says not what was seen", r)
					}
				case conformance.NotRun:
					t.Errorf("not run: %s", r)
				}
			}
			want := c.fail
			if !slices.Equal(failed, want) {
				t.Fatalf("failed %v, want %v", failed, want)
			}
			t.Logf("%s", resultFor(results, want[0]))
		})
	}
}

// TestWrongProofSeen: the wrong proof's check says what was wrong.
func TestWrongProofSeen(t *testing.T) {
	e := start(t, reference.Faults{WrongProof: true})
	results, err := conformance.Check(t.Context(), e.Target())
	if err != nil {
		t.Fatal(err)
	}
	r := resultFor(results, "proof")
	if r.Status != conformance.Fail || !strings.Contains(r.Seen, "is not the HMAC-SHA256") {
		t.Fatalf("got %s", r)
	}
}

// TestNotRun: a target offering only its URL and key runs what needs no
// hook, and reports the rest not run, never passed.
func TestNotRun(t *testing.T) {
	e := start(t, reference.Faults{})
	full := e.Target()
	bare := conformance.Target{URL: full.URL, Key: full.Key, Agent: full.Agent, AgentID: full.AgentID}
	results, err := conformance.Check(t.Context(), bare)
	if err != nil {
		t.Fatal(err)
	}
	wantNotRun := []string{"tcp-nodelay", "routing-default", "routing-shared", "tool-call", "tools-narrow", "recover", "recover-two-phase"}
	for _, r := range results {
		isMeta := strings.HasPrefix(r.Name, "meta-")
		switch {
		case slices.Contains(wantNotRun, r.Name) || isMeta:
			if r.Status != conformance.NotRun || r.Seen == "" {
				t.Errorf("%s: want not run, with why", r)
			}
			if isMeta && !strings.Contains(r.Seen, "refused on the wire") {
				t.Errorf("%s: the wire's part should have run and passed", r)
			}
		case r.Status != conformance.Pass:
			t.Errorf("%s: want pass", r)
		}
	}
}

// TestUnreachable: a target nobody answers fails its checks, quickly.
func TestUnreachable(t *testing.T) {
	e := start(t, reference.Faults{})
	target := e.Target()
	e.Close()
	target.Timeout = 2 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	results, err := conformance.Check(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Status == conformance.Pass {
			t.Errorf("%s passed against nothing", r)
		}
	}
}

func TestBadTarget(t *testing.T) {
	for _, target := range []conformance.Target{
		{URL: "", Key: []byte("k")},
		{URL: "ftp://127.0.0.1:1/acp", Key: []byte("k")},
		{URL: "http://127.0.0.1/acp", Key: []byte("k")},
		{URL: "http://127.0.0.1:1/acp"},
		{URL: "http://127.0.0.1:1/acp", Key: []byte("k"), Agent: "Bad Name"},
		{URL: "http://127.0.0.1:1/acp", Key: []byte("k"), ToolCall: &conformance.ToolCall{Prompt: "x"}},
	} {
		if _, err := conformance.Check(t.Context(), target); err == nil {
			t.Errorf("%+v: checked, want refused", target)
		}
	}
}

func names(rs []conformance.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

func resultFor(rs []conformance.Result, name string) conformance.Result {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return conformance.Result{}
}
