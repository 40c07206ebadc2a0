package file

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkFind is a find over a workspace of 10,000 files (100 folders
// of 100, a few lines each, a .gitignore leaving out one folder in ten):
// by name, and by a pattern through every file's lines. The target is
// under 100 ms a find.
func BenchmarkFind(b *testing.B) {
	w, dir := space(b)
	for d := range 100 {
		for f := range 100 {
			ext := ".txt"
			if f%10 == 0 {
				ext = ".go"
			}
			put(b, filepath.Join(dir, fmt.Sprintf("pkg%02d", d), fmt.Sprintf("file%03d%s", f, ext)),
				fmt.Sprintf("package pkg%02d\n\n// file %d of folder %d\nfunc F%d() int { return %d }\n%s", d, f, d, f, f, strings.Repeat("// filler line of a source file\n", 20)))
		}
	}
	put(b, filepath.Join(dir, ".gitignore"), "pkg*0/\n")
	for _, c := range []struct {
		name string
		q    Query
		want int
	}{
		{"names", Query{Glob: "*.go", Limit: MaxFound}, 900},
		{"lines", Query{Pattern: `return 5\d\b`, Limit: MaxFound}, 900},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				f, err := w.Find(context.Background(), c.q)
				if err != nil {
					b.Fatal(err)
				}
				if got := len(f.Files) + len(f.Matches); got != c.want {
					b.Fatalf("found %d, want %d", got, c.want)
				}
			}
			// The CPU a find takes, on every core, whatever else runs.
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
