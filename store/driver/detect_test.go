package driver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/sqlite"
)

// Of reads the driver from the files the drivers declared: a marker
// first, compact's frames even empty, the log's file once it holds an
// event, and nothing for a folder holding no event.
func TestOfDeclaredFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no folder", nil, ""},
		{"no event", map[string]string{"tools.json": "[]", "lease.json": "{}"}, ""},
		{"empty log", map[string]string{"events.jsonl": ""}, ""},
		{"log", map[string]string{"events.jsonl": "{}\n"}, log.Name},
		{"empty frames", map[string]string{"events.zst": ""}, compact.Name},
		{"frames and tail", map[string]string{"events.zst": "x", "events.jsonl": "{}\n"}, compact.Name},
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
			if got, err := driver.Of(dir); got != c.want || err != nil {
				t.Errorf("Of = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// The log and compact register the files their events are in, how each
// opens in the program's process, and compact that it keeps no copy for
// people; sqlite registers its name alone (it runs in its plugin).
func TestLookup(t *testing.T) {
	for name, want := range map[string][]string{
		log.Name:     {"events.jsonl"},
		compact.Name: {"events.zst", "events.jsonl"},
	} {
		k, ok := driver.Lookup(name)
		if !ok {
			t.Fatalf("%s registered nothing", name)
		}
		if diff := cmp.Diff(want, k.Events); diff != "" {
			t.Errorf("%s's event files (-want +got):\n%s", name, diff)
		}
		if k.Open == nil {
			t.Errorf("%s registered no Open: it runs in the program's process", name)
		}
	}
	if d, ok := driver.Lookup(sqlite.Name); !ok || d.InFolder() || d.NoTranscript || d.Open != nil {
		t.Errorf("sqlite registered %+v, %v; want its name alone", d, ok)
	}
	if d, _ := driver.Lookup(compact.Name); !d.NoTranscript {
		t.Error("compact registered a copy for people")
	}
}

// Two kinds whose signs are both there, neither holding the other's sign
// among its files, are refused by name; a name registered twice panics.
func TestDriversApart(t *testing.T) {
	driver.Register(driver.Driver{Name: "testa", Events: []string{"a.log"}, Sign: "a.log"})
	driver.Register(driver.Driver{Name: "testb", Events: []string{"b.log"}, Sign: "b.log", EmptySign: true})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.log"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := driver.Of(dir); got != "testa" || err != nil {
		t.Fatalf("Of = %q, %v; want testa", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.log"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := driver.Of(dir); err == nil || !strings.Contains(err.Error(), "testa and testb") {
		t.Fatalf("Of of two kinds' files: %v, want both named", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering testa twice didn't panic")
		}
	}()
	driver.Register(driver.Driver{Name: "testa", Events: []string{"c.log"}, Sign: "c.log"})
}
