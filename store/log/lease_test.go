package log_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// stat is path's file, failing t when there is none; os.SameFile tells
// two of them apart as their inodes would.
func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// TestLeaseInPlace: turn after turn, the lease is written over in place
// (the same file, nothing made or removed), a shorter lease over a longer
// one reads as itself, and one let go is taken by another at once.
func TestLeaseInPlace(t *testing.T) {
	ctx := context.Background()
	chats := t.TempDir()
	d := log.Open(chats)
	path := filepath.Join(chats, "telegram-42", log.LeaseFile)
	long := "holder-" + strings.Repeat("x", 200)
	if _, err := d.Lease(ctx, "telegram:42", long, time.Minute); err != nil {
		t.Fatal(err)
	}
	was := stat(t, path)
	if err := d.Release(ctx, "telegram:42", long); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"h1", "h2", long, "h1"} {
		l, err := d.Lease(ctx, "telegram:42", h, time.Minute)
		if err != nil {
			t.Fatalf("lease for %s: %v", h, err)
		}
		if l.Holder != h {
			t.Fatalf("lease for %s: held by %q", h, l.Holder)
		}
		if _, err := d.Lease(ctx, "telegram:42", "other", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
			t.Fatalf("lease for other while %s holds it: %v, want ErrLeaseHeld", h, err)
		}
		if err := d.Release(ctx, "telegram:42", h); err != nil {
			t.Fatal(err)
		}
		if err := d.Release(ctx, "telegram:42", h); err != nil {
			t.Fatalf("release again: %v", err)
		}
	}
	if !os.SameFile(stat(t, path), was) {
		t.Fatal("lease.json replaced (another file), not written in place")
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "events.jsonl lease.json" {
		t.Fatalf("folder holds %v, want events.jsonl and lease.json", names)
	}
}

// TestLeaseLong: a holder too long to write in place is written whole by
// rename, and a short one after it is in place again, each read back as
// itself.
func TestLeaseLong(t *testing.T) {
	ctx := context.Background()
	d := log.Open(t.TempDir())
	huge := strings.Repeat("h", 2000)
	for _, h := range []string{"h1", huge, "h2"} {
		if _, err := d.Lease(ctx, "default", h, time.Minute); err != nil {
			t.Fatalf("lease for %.10s: %v", h, err)
		}
		if _, err := d.Lease(ctx, "default", "other", time.Minute); err == nil || !strings.Contains(err.Error(), "by "+h+" until") {
			t.Fatalf("lease for other while %.10s holds it: %v", h, err)
		}
		if err := d.Release(ctx, "default", h); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLeaseLost: a lease.json empty or of NULs, as a machine that stopped
// before its bytes reached the disk leaves it, is no lease; one of other
// bytes is corrupt.
func TestLeaseLost(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, body string
		corrupt    bool
	}{
		{"empty", "", false},
		{"nuls", "\x00\x00\x00\x00\x00\x00", false},
		{"spaces", "   \n", false},
		{"garbage", `{"holder":`, true},
		{"no holder", `{"expires":"2030-01-01T00:00:00Z"}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			chats := t.TempDir()
			d := log.Open(chats)
			dir := filepath.Join(chats, "default")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, log.LeaseFile), []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := d.Lease(ctx, "default", "h1", time.Minute)
			if c.corrupt {
				if !errors.Is(err, store.ErrCorrupt) {
					t.Fatalf("lease over %q: %v, want ErrCorrupt", c.body, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("lease over %q: %v", c.body, err)
			}
			if _, err := d.Lease(ctx, "default", "h2", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
				t.Fatalf("lease for h2: %v, want ErrLeaseHeld", err)
			}
		})
	}
}

// TestLeaseReadCorrupt: a lease taken with a read of a file whose lines
// are no events fails naming the file, and takes nothing: another holder
// takes the lease at once. A release with one lets the lease go, and
// fails so too.
func TestLeaseReadCorrupt(t *testing.T) {
	ctx := context.Background()
	d, path := withFile(t, append(lines(t, storetest.Events(2, "a")), "not an event\n"...))
	_, es, err := d.LeaseRead(ctx, "default", "h1", time.Minute, 2)
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), path) || es != nil {
		t.Fatalf("lease and read of a corrupt file: %d events, %v; want ErrCorrupt naming %s", len(es), err, path)
	}
	if _, err := d.Lease(ctx, "default", "h2", time.Minute); err != nil {
		t.Fatalf("a lease after a lease and read that failed: %v", err)
	}
	if _, err := d.ReleaseRead(ctx, "default", "h2", 2); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("release and read of a corrupt file: %v, want ErrCorrupt", err)
	}
	if _, err := d.Lease(ctx, "default", "h1", time.Minute); err != nil {
		t.Fatalf("a lease after a release and read that failed reading: %v", err)
	}
}
