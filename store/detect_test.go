package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lnk-dev/link/store"
	_ "github.com/lnk-dev/link/store/compact" // registers compact's folder kind
	_ "github.com/lnk-dev/link/store/log"     // registers the log's folder kind
)

// KindOf reads the driver from the files the drivers declared: a marker
// first, compact's frames even empty, the log's file once it holds an
// event, and nothing for a folder holding no event.
func TestKindOfDeclaredFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no folder", nil, ""},
		{"no event", map[string]string{"tools.json": "[]", "lease.json": "{}"}, ""},
		{"empty log", map[string]string{"events.jsonl": ""}, ""},
		{"log", map[string]string{"events.jsonl": "{}\n"}, store.Log},
		{"empty frames", map[string]string{"events.zst": ""}, store.Compact},
		{"frames and tail", map[string]string{"events.zst": "x", "events.jsonl": "{}\n"}, store.Compact},
		{"marker", map[string]string{"store.sqlite": "", "events.zst": "x", "events.jsonl": "{}\n"}, "sqlite"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "telegram-1")
			if c.files != nil {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for name, text := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got, err := store.KindOf(dir); got != c.want || err != nil {
				t.Errorf("KindOf = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// The log and compact declare the files their events are in; a store
// driver declares none.
func TestLookupFolderKind(t *testing.T) {
	for name, want := range map[string][]string{
		store.Log:     {"events.jsonl"},
		store.Compact: {"events.zst", "events.jsonl"},
	} {
		k, ok := store.LookupFolderKind(name)
		if !ok {
			t.Fatalf("%s declared no folder kind", name)
		}
		if diff := cmp.Diff(want, k.Events); diff != "" {
			t.Errorf("%s's event files (-want +got):\n%s", name, diff)
		}
	}
	if _, ok := store.LookupFolderKind("sqlite"); ok {
		t.Error("sqlite declared a folder kind")
	}
}

// Two kinds whose signs are both there, neither holding the other's sign
// among its files, are refused by name; a name registered twice panics.
func TestFolderKindsApart(t *testing.T) {
	store.RegisterFolderKind(store.FolderKind{Name: "testa", Events: []string{"a.log"}, Sign: "a.log"})
	store.RegisterFolderKind(store.FolderKind{Name: "testb", Events: []string{"b.log"}, Sign: "b.log", EmptySign: true})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.log"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := store.KindOf(dir); got != "testa" || err != nil {
		t.Fatalf("KindOf = %q, %v; want testa", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.log"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.KindOf(dir); err == nil || !strings.Contains(err.Error(), "testa and testb") {
		t.Fatalf("KindOf of two kinds' files: %v, want both named", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering testa twice didn't panic")
		}
	}()
	store.RegisterFolderKind(store.FolderKind{Name: "testa", Events: []string{"c.log"}, Sign: "c.log"})
}
