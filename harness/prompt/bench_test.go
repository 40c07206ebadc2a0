package prompt

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/home"
)

// BenchmarkCompose is a turn's cost of composing the sample home's whole
// prompt, its skills kept from the turn before (each SKILL.md looked at,
// not read), its files read through the store's seam on disk.
func BenchmarkCompose(b *testing.B) {
	f, _ := sampleHome(b)
	c := &Composer{Files: f}
	turn := sampleTurn()
	ctx := context.Background()
	if _, err := c.Compose(ctx, turn); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Compose(ctx, turn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkComposeFloor is the floor Compose is measured against: the
// same files read straight with one ReadFile each through the seam, no
// sections made.
func BenchmarkComposeFloor(b *testing.B) {
	f, _ := sampleHome(b)
	ctx := context.Background()
	names := []string{
		"instructions/models/anthropic/claude-opus-5-5/instruction.md", "instructions/persona.md",
		"instructions/owner.md", "instructions/instruction.md", "memory/notes.md",
		"files/AGENTS.md", "files/app/AGENTS.md", "files/docs/CLAUDE.md",
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range names {
			if _, err := f.ReadFile(ctx, "main", n, 1<<16); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkComposeMissing is a turn's compose of an agent whose own files
// are all missing (no persona, notes, skills or files folder), through
// home.Misses as the harness reads them, its folders long settled: the
// common case, answered from memory after one look at the home.
func BenchmarkComposeMissing(b *testing.B) {
	dir := b.TempDir()
	p, err := store.For(dir, "main")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		b.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	c := &Composer{Files: &home.Misses{Files: home.Files{Home: dir}, Now: later}}
	turn := Turn{Agent: "main", Model: "offline"}
	ctx := context.Background()
	if _, err := c.Compose(ctx, turn); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Compose(ctx, turn); err != nil {
			b.Fatal(err)
		}
	}
}
