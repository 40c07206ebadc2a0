package transcript_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store/transcript"
)

// The copy's end, read from whatever a file holds, names an answer only
// when the file ends with a whole trailer.
func FuzzEnd(f *testing.F) {
	for _, s := range []string{"", "## Agent\n\nhi\n\n<!-- seq 12 -->\n\n", "<!-- seq 0 -->\n\n", "<!-- seq 99999999999999999999 -->\n\n",
		"x<!-- seq 3 -->\n", "<!-- seq -3 -->\n\n", "<!-- seq 7 -->\n\n\n"} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, transcript.File)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		seq, ok, err := transcript.End(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 && (!ok || seq != 0) {
			t.Fatalf("an empty copy ends with %d, %v: want none yet", seq, ok)
		}
		if len(b) > 0 && ok && (seq < 1 || !strings.HasSuffix(string(b), " -->\n\n")) {
			t.Fatalf("%q ends with answer %d", b, seq)
		}
		if !ok && seq != 0 {
			t.Fatalf("not ended, yet %d", seq)
		}
	})
}
