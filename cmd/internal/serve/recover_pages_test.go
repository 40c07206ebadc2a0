package serve

import (
	"fmt"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/internal/recovery/recoverytest"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/delivery"
)

// TestRecoverPages: answers kept past what one message carries (40 of
// 500 KB, one per conversation, as after a bridge was away; two of
// 9 MiB) are handed over in pages, each read whole by a client with the
// bridge's 16 MiB bound: every answer exactly once, none lost, single
// phase and two-phase.
func TestRecoverPages(t *testing.T) {
	for _, c := range recoverytest.PileUps {
		t.Run(c.Name, func(t *testing.T) {
			home := t.TempDir()
			p, err := store.For(home, contract.DefaultAgent)
			if err != nil {
				t.Fatal(err)
			}
			f := &delivery.Answers{Paths: p}
			want := map[string]string{}
			for i := range c.N {
				thread := fmt.Sprintf("telegram:%d", i+1)
				text := recoverytest.Text(i, c.Size)
				if _, err := f.Keep(t.Context(), thread, text, time.Now(), 0); err != nil {
					t.Fatal(err)
				}
				want[thread] = text
			}
			s, _ := startServed(t, func(cfg *Config) { cfg.Home = home })
			d, err := recoverytest.Drain(t.Context(), endpoint.DialOptions{URL: s.URL(), Key: testKey}, c.TwoPhase)
			t.Logf("%d pages, the largest result %d bytes (a frame is %d)", d.Pages, d.Largest, recoverytest.BridgeRead)
			if err != nil {
				left, _ := f.Pending(t.Context())
				t.Fatalf("after %d pages: %v; of %d answers kept, %d handed over, %d left on disk: %d lost", d.Pages, err, c.N, len(d.Got), len(left), c.N-len(d.Got)-len(left))
			}
			if d.Pages < 2 {
				t.Errorf("%d pages; %d answers of %d bytes don't fit in one", d.Pages, c.N, c.Size)
			}
			recoverytest.WantAllOnce(t, want, d.Got)
			if left, err := f.Pending(t.Context()); err != nil || len(left) != 0 {
				t.Errorf("left kept after every page: %d, %v", len(left), err)
			}
		})
	}
}
