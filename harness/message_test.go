package harness_test

import (
	"testing"
	"time"

	"github.com/lnk-dev/link/harness"
)

// The header says who's speaking for the owner alone; a message from
// others says who on its first line, its words quoted.
func TestHeaderAndQuoted(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	for _, c := range []struct {
		thread string
		owner  bool
		want   string
	}{
		{"telegram:42", true, "[Mon 30 Nov 2026 10:15 CET, telegram, your owner]"},
		{"telegram:42", false, "[Mon 30 Nov 2026 10:15 CET, telegram]"},
		{"default", true, "[Mon 30 Nov 2026 10:15 CET, default, your owner]"},
	} {
		if got := harness.Header(at, paris, c.thread, c.owner); got != c.want {
			t.Errorf("Header(%s, owner %v) = %q, want %q", c.thread, c.owner, got, c.want)
		}
	}
	for _, c := range []struct {
		from, name string
		hops       int
		text, want string
	}{
		{"person:telegram:7", "Grace", 0, "hi\n\nthere", "Grace (person:telegram:7) wrote:\n> hi\n>\n> there"},
		{"agent:helper", "", 1, "done", "agent:helper wrote, 1 hop away:\n> done"},
		{"agent:helper", "", 3, "done", "agent:helper wrote, 3 hops away:\n> done"},
		{"webhook:ci", "", 0, "", "webhook:ci wrote:"},
	} {
		if got := harness.Quoted(c.from, c.name, c.hops, c.text); got != c.want {
			t.Errorf("Quoted(%s, %q, %d) = %q, want %q", c.from, c.name, c.hops, got, c.want)
		}
	}
}
