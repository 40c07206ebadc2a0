package main

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/cmd/internal/floor"
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
		floor := floor.Handler(key)
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

// parseStat reads a process's user and system time from its
// /proc/<pid>/stat, a command name with spaces and parentheses in it
// too, and refuses what isn't one.
func TestParseStat(t *testing.T) {
	stat := "4242 (lnk (x) y) S 1 4242 4242 0 -1 4194560 120 0 0 0 250 31 0 0 20 0 9 0 100 0 0\n"
	if d, err := parseStat([]byte(stat)); err != nil || d != 2810*time.Millisecond {
		t.Fatalf("%v, %v", d, err)
	}
	for _, bad := range []string{"", "4242 lnk S 1", "1 (a) S 1 2 3 4 5 6 7 8 9 10 x 31", "1 (a) S 1 2 3 4 5 6 7 8 9 10 -5 31"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// FuzzParseStat proves the reader of /proc/<pid>/stat never panics and
// gives no negative time.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (lnk) S 1 4242 4242 0 -1 4194560 120 0 0 0 250 31 0 0\n"))
	f.Add([]byte("1 ()) S"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := parseStat(b); err == nil && d < 0 {
			t.Fatalf("%v", d)
		}
	})
}
