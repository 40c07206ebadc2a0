package transcript

import (
	"regexp"
	"testing"
)

// trailerRE is what trailerSeq reads, as a regexp: the two agree on any
// bytes.
var trailerRE = regexp.MustCompile(`<!-- seq ([0-9]{1,19}) -->\n\n\z`)

func FuzzTrailerSeq(f *testing.F) {
	for _, s := range []string{"", "<!-- seq 12 -->\n\n", "hi\n\n<!-- seq 1 -->\n\n", "<!-- seq  -->\n\n", "<!-- seq 1234567890123456789 -->\n\n",
		"<!-- seq 12345678901234567890 -->\n\n", "<!-- seq 1a -->\n\n", "<!-- seq 7 -->\n\n\n", "<!-- seq 7 -->\n", "<!--seq 7 -->\n\n", "x<!-- seq 07 -->\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := trailerSeq(b)
		m := trailerRE.FindSubmatch(b)
		if ok != (m != nil) || (ok && got != string(m[1])) {
			t.Fatalf("%q: trailerSeq %q %v, the regexp %q", b, got, ok, m)
		}
	})
}
