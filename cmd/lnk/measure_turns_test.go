package main

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lnk-dev/link/contract"
)

// TestMessagesInTurns: lnk measure's messages go to the floor and to the
// harness in turns, the same message to each, one after the other, so a
// load that comes and goes weighs on both alike.
func TestMessagesInTurns(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	var mu sync.Mutex
	var got []string
	conns := make([]*agentConn, 2)
	for i, name := range []string{"floor", "harness"} {
		floor := floorHandler(key)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == contract.ACPPath {
				mu.Lock()
				got = append(got, name)
				mu.Unlock()
			}
			floor.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		conns[i] = &agentConn{url: srv.URL + contract.ACPPath, key: key, agent: "main"}
	}
	turns := func(n int) []string {
		var want []string
		for range n {
			want = append(want, "floor", "harness")
		}
		return want
	}
	cold, err := coldMessages(t.Context(), conns, "t", 3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, turns(3)) || len(cold) != 2 || cold[0].p50 <= 0 || cold[1].p50 <= 0 {
		t.Fatalf("cold: messages went to %v (%+v)", got, cold)
	}
	got = nil
	warm, err := warmMessages(t.Context(), conns, "t", 2)
	if err != nil {
		t.Fatal(err)
	}
	// The first message of each conversation isn't timed, but it too
	// goes to both in turn.
	if !slices.Equal(got, turns(3)) || len(warm) != 2 || warm[1].p50 <= 0 {
		t.Fatalf("warm: messages went to %v (%+v)", got, warm)
	}
}

// TestTurnsTargets: turns a second at 1 and at 64 conversations at once
// are set beside the floor's at the same number (at least 0.5 and 0.6 of
// it), and no other number has a target.
func TestTurnsTargets(t *testing.T) {
	for _, c := range []struct {
		name   string
		ratio  float64
		target string
		met    bool
	}{
		{"turns/s, 1 at once", 0.5, "≥ 0.5× floor", true},
		{"turns/s, 1 at once", 0.49, "≥ 0.5× floor", false},
		{"turns/s, 64 at once", 0.6, "≥ 0.6× floor", true},
		{"turns/s, 64 at once", 0.59, "≥ 0.6× floor", false},
		{"turns/s, 8 at once", 0.1, "", false},
	} {
		f := figure{Name: c.name, Unit: "turns/s", Value: 100, Floor: ptr(100 / c.ratio), Ratio: ptr(c.ratio)}
		setTarget(&f, nil)
		if f.Target != c.target || (c.target != "" && (f.Met == nil || *f.Met != c.met)) || (c.target == "" && f.Met != nil) {
			t.Errorf("%s at %.2f: target %q met %v", c.name, c.ratio, f.Target, f.Met)
		}
	}
}
