package hub

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/recovery/recoverytest"
	"github.com/lnk-dev/link/internal/stdioagent"
)

// TestRecoverPages: answers the hub kept in its answers file past what
// one message carries (40 of 500 KB, as after a bridge was away; two of
// 9 MiB) are handed over in pages, each read whole by a client with the
// bridge's 16 MiB bound: every answer exactly once, none lost, single
// phase and two-phase.
func TestRecoverPages(t *testing.T) {
	for _, c := range recoverytest.PileUps {
		t.Run(c.Name, func(t *testing.T) {
			// The file as the hub writes it, written once.
			path := filepath.Join(t.TempDir(), "answers.json")
			doc := answersDoc{Next: c.N}
			want := map[string]string{}
			for i := range c.N {
				thread := fmt.Sprintf("telegram:%d", i+1)
				text := recoverytest.Text(i, c.Size)
				doc.Answers = append(doc.Answers, contract.RecoveredAnswer{ID: hubIDPrefix + strconv.Itoa(i+1), Thread: thread, Text: text})
				want[thread] = text
			}
			b, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			r := newRig(t, nil, func(cfg *Config) { cfg.Answers = path })
			d, err := recoverytest.Drain(t.Context(), endpoint.DialOptions{URL: r.url, Key: r.key, Agent: "main"}, c.TwoPhase)
			t.Logf("%d pages, the largest result %d bytes (a frame is %d)", d.Pages, d.Largest, recoverytest.BridgeRead)
			got, pages := d.Got, d.Pages
			if err != nil {
				t.Fatalf("after %d pages: %v; of %d answers kept, %d handed over, %d left: %d lost", pages, err, c.N, len(got), r.keptCount(), c.N-len(got)-r.keptCount())
			}
			if pages < 2 {
				t.Errorf("%d pages; %d answers of %d bytes don't fit in one", pages, c.N, c.Size)
			}
			recoverytest.WantAllOnce(t, want, got)
			if n := r.keptCount(); n != 0 {
				t.Errorf("%d left kept after every page", n)
			}
		})
	}
}

// keptCount is how many answers the hub keeps.
func (r *rig) keptCount() int {
	r.hub.answers.mu.Lock()
	defer r.hub.answers.mu.Unlock()
	return len(r.hub.answers.list)
}

// TestRecoverPagesBothSides: a hub whose harness keeps answers of its own
// (its sessions are threads, as Link Harness's) hands over its own and
// the harness's, 20 of 500 KB each, in pages, each page one side's and
// within a frame: every answer exactly once, none lost, single phase and
// two-phase.
func TestRecoverPagesBothSides(t *testing.T) {
	for _, twoPhase := range []bool{false, true} {
		t.Run(fmt.Sprint("two-phase ", twoPhase), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "answers.json")
			own := answersDoc{Next: 20}
			var theirs []contract.RecoveredAnswer
			want := map[string]string{}
			for i := range 20 {
				text := strings.Repeat(string(rune('a'+i%26)), 500<<10)
				own.Answers = append(own.Answers, contract.RecoveredAnswer{ID: hubIDPrefix + strconv.Itoa(i+1), Thread: fmt.Sprintf("telegram:%d", i), Text: "hub " + text})
				theirs = append(theirs, contract.RecoveredAnswer{ID: fmt.Sprintf("telegram-%d~x", 100+i), Thread: fmt.Sprintf("telegram:%d", 100+i), Text: "harness " + text})
				want[own.Answers[i].Thread], want[theirs[i].Thread] = own.Answers[i].Text, theirs[i].Text
			}
			writeJSON(t, path, own)
			r := newRig(t, []string{envCaps + "=threads"}, func(cfg *Config) { cfg.Answers = path })
			writeJSON(t, filepath.Join(r.state, stdioagent.RecoverFile), theirs)
			d, err := recoverytest.Drain(t.Context(), endpoint.DialOptions{URL: r.url, Key: r.key, Agent: "main"}, twoPhase)
			t.Logf("%d pages, the largest result %d bytes (a frame is %d)", d.Pages, d.Largest, recoverytest.BridgeRead)
			if err != nil {
				t.Fatalf("after %d pages: %v", d.Pages, err)
			}
			recoverytest.WantAllOnce(t, want, d.Got)
			if len(r.agentLog("recover")) == 0 {
				t.Error("the harness was never asked")
			}
		})
	}
}

// writeJSON writes v to path as JSON.
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
