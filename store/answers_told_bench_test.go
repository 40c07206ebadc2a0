package store

import (
	"context"
	"testing"
	"time"
)

// BenchmarkKeepTellingTold is the cost a message's answer pays to be
// kept while its caller is told it, and let go after.
func BenchmarkKeepTellingTold(b *testing.B) {
	p, err := For(b.TempDir(), "main")
	if err != nil {
		b.Fatal(err)
	}
	f := &Folders{Paths: p}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		id, err := f.TellingID("telegram:42")
		if err != nil {
			b.Fatal(err)
		}
		if err := f.KeepTelling(ctx, id, "telegram:42", "The answer, streamed in pieces.", time.Time{}); err != nil {
			b.Fatal(err)
		}
		if err := f.Told(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}
