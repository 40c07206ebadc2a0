package harness

import (
	"encoding/json"
	"strings"
	"testing"
)

// wireLen is the length json.Marshal gives a string, counted without an
// allocation (a chunk of a streamed answer is counted twice).
func TestWireLen(t *testing.T) {
	for _, s := range []string{"", "plain", cutNote, "quote \" \\ <a>&\n\t\x01", "é中文🙂", "\xff bad \xc3", "\u2028\u2029", strings.Repeat("x<", 5000)} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if n := wireLen(s); n != len(want) {
			t.Errorf("wireLen(%.40q) = %d, json.Marshal's length %d", s, n, len(want))
		}
	}
	text := strings.Repeat("an answer's chunk <b>&</b>\n", 20)
	if allocs := testing.AllocsPerRun(100, func() { _ = wireLen(text) }); allocs != 0 {
		t.Errorf("wireLen made %v allocations, want 0", allocs)
	}
}
