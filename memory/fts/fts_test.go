package fts_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lnk-dev/link/memory"
	"github.com/lnk-dev/link/memory/fts"
)

// Any query, however it is written (quotes, FTS5's own operators,
// scripts without spaces), is a query the index runs, never a syntax
// error.
func FuzzSearch(f *testing.F) {
	for _, q := range []string{`"a" OR b`, `NEAR(a b)`, `a*`, `-x`, `col:a`, `苹果 AND`, `(`, `'`, "\x00"} {
		f.Add(q)
	}
	ctx := context.Background()
	x, err := fts.Open(ctx, filepath.Join(f.TempDir(), "index.sqlite"))
	if err != nil {
		f.Fatal(err)
	}
	defer x.Close()
	text := "the quick brown fox 我喜欢吃苹果 \"quoted\" NEAR AND OR NOT"
	err = x.Put(ctx, []memory.Doc{{Source: memory.Source{Name: "files/a.md", Kind: memory.KindFile, File: "files/a.md", Stamp: "1"}, Chunks: []memory.Chunk{{Line: 1, Lines: 1, Len: len(text), Text: text}}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if _, err := x.Search(ctx, q, 10); err != nil {
			t.Fatalf("%q: %v", q, err)
		}
	})
}
