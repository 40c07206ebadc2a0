package scripted

import "unicode/utf8"

// Pieces cuts s into up to n pieces of about equal length at rune
// boundaries, none empty; "" is no pieces. It is how the offline model
// and the fake provider stream a text in a few deltas.
func Pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	runes := utf8.RuneCountInString(s)
	n = min(n, runes)
	size := (runes + n - 1) / n
	var out []string
	for s != "" {
		i, k := 0, 0
		for i < len(s) && k < size {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			k++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}
