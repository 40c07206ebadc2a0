package serve

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store"
)

// lnk is found as $LNK_STORE_COMMAND says, else beside the program, else
// in $PATH; none found, the error names each place looked.
func TestFindStoreCommand(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := FindStoreCommand(nil)
	if err == nil {
		t.Fatal("found lnk where there is none")
	}
	exe, _ := os.Executable()
	for _, want := range []string{"$" + EnvStoreCommand, filepath.Join(filepath.Dir(exe), "lnk"), "lnk in $PATH"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q doesn't say %q", err, want)
		}
	}
	missing := filepath.Join(t.TempDir(), "lnk")
	if _, err := FindStoreCommand(map[string]string{EnvStoreCommand: missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("$%s naming no program: %v", EnvStoreCommand, err)
	}
	bin := t.TempDir()
	prog := filepath.Join(bin, "lnk")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := FindStoreCommand(map[string]string{EnvStoreCommand: prog}); err != nil || got != prog {
		t.Fatalf("$%s %s: %q, %v", EnvStoreCommand, prog, got, err)
	}
	t.Setenv("PATH", bin)
	if got, err := FindStoreCommand(nil); err != nil || got != prog {
		t.Fatalf("lnk in $PATH: %q, %v", got, err)
	}
}

// Without lnk, the drivers a program doesn't link are still there, so a
// conversation they keep is routed to them, and each call says why it
// can't be made; the log is untouched by it. A linked driver opens at its
// first call only.
func TestWaysDrivers(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	w := Ways{Key: []byte("serve-test-key-0123456789"), Linked: map[string]store.Opener{
		"nosql": func(chats string) (store.Conversations, error) { opened++; return nil, errors.New("nosql is down") },
	}}
	ds, err := w.Drivers(p)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, d := range ds {
			if c, ok := d.(store.Closer); ok {
				c.Close()
			}
		}
	}()
	for _, name := range []string{store.Log, store.Compact, "sqlite", "gcs", "nosql"} {
		if ds[name] == nil {
			t.Fatalf("no %s driver", name)
		}
	}
	if opened != 0 {
		t.Fatal("a linked driver opened before its first call")
	}
	if _, err := ds["nosql"].Read(t.Context(), "telegram:1", 1); err == nil || opened != 1 {
		t.Fatalf("a linked driver that can't open: %v, opened %d times", err, opened)
	}
	_, err = ds["sqlite"].Read(t.Context(), "telegram:1", 1)
	if err == nil || !strings.Contains(err.Error(), "find lnk") || !strings.Contains(err.Error(), "sqlite") {
		t.Fatalf("sqlite with no lnk: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.Root, socketDir)); err == nil {
		t.Fatal("a socket folder made with no lnk to listen there")
	}
	if o := w.Openers(p); o["sqlite"] != nil || o["nosql"] == nil || o[store.Log] == nil {
		t.Fatalf("openers: %v", o)
	}
}

// Sockets left by harnesses no longer running are removed; a running
// one's, this one's and what isn't a socket are let be.
func TestRemoveLeftSockets(t *testing.T) {
	dir, err := os.MkdirTemp("", "lnk-sock-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	mk := func(name string) string {
		path := filepath.Join(dir, name)
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		return path
	}
	dead := mk("store-sqlite-99999999.sock")
	mine := mk("store-sqlite-" + strconv.Itoa(os.Getpid()) + ".sock")
	initProc := mk("store-gcs-1.sock")
	plain := filepath.Join(dir, "store-sqlite-99999998.sock")
	if err := os.WriteFile(plain, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	removeLeftSockets(dir)
	if _, err := os.Lstat(dead); err == nil {
		t.Error("a dead harness's socket is there")
	}
	for _, kept := range []string{mine, initProc, plain} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s removed", filepath.Base(kept))
		}
	}
}
