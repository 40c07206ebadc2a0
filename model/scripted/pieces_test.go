package scripted

import (
	"slices"
	"strings"
	"testing"
)

// TestPieces cuts texts into up to n pieces of about equal length at rune
// boundaries, none empty, that join to the text.
func TestPieces(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"a", 3, []string{"a"}},
		{"abc", 3, []string{"a", "b", "c"}},
		{"abcdefg", 3, []string{"abc", "def", "g"}},
		{"héllo wörld", 2, []string{"héllo ", "wörld"}},
		{"日本語テキスト", 3, []string{"日本語", "テキス", "ト"}},
		{"abcd", 1, []string{"abcd"}},
	} {
		got := Pieces(c.s, c.n)
		if !slices.Equal(got, c.want) {
			t.Errorf("Pieces(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
		if strings.Join(got, "") != c.s {
			t.Errorf("Pieces(%q, %d) joins to %q", c.s, c.n, strings.Join(got, ""))
		}
	}
}
