package drivers

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store"
)

// A plugin is found as $LNK_STORE_COMMAND says, else beside the program,
// else in $PATH; none found (and no go command to build one from source),
// the error names each place looked.
func TestFindPlugin(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := FindPlugin("sqlite", nil)
	if err == nil {
		t.Fatal("found lnk-sqlite where there is none")
	}
	exe, _ := os.Executable()
	for _, want := range []string{"$" + EnvStoreCommand, filepath.Join(filepath.Dir(exe), "lnk-sqlite"), "lnk-sqlite in $PATH"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q doesn't say %q", err, want)
		}
	}
	missing := filepath.Join(t.TempDir(), "lnk-sqlite")
	if _, err := FindPlugin("sqlite", map[string]string{EnvStoreCommand: missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("$%s naming no program: %v", EnvStoreCommand, err)
	}
	bin := t.TempDir()
	prog := filepath.Join(bin, "lnk-sqlite")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := FindPlugin("sqlite", map[string]string{EnvStoreCommand: prog}); err != nil || got != prog {
		t.Fatalf("$%s %s: %q, %v", EnvStoreCommand, prog, got, err)
	}
	t.Setenv("PATH", bin)
	if got, err := FindPlugin("sqlite", nil); err != nil || got != prog {
		t.Fatalf("lnk-sqlite in $PATH: %q, %v", got, err)
	}
}

// Without their plugins, the drivers run behind the store bridge are
// still there, so a conversation they keep is routed to them, and each
// call says why it can't be made; nothing is made for them meanwhile.
func TestSetOpen(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	p, err := store.For(t.TempDir(), "main")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Set{}.Open(p)
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
	var got []string
	for name := range ds {
		got = append(got, name)
	}
	slices.Sort(got)
	if want := Names(); !slices.Equal(got, want) {
		t.Fatalf("drivers %v, want %v", got, want)
	}
	_, err = ds["sqlite"].Read(t.Context(), "telegram:1", 1)
	if err == nil || !strings.Contains(err.Error(), "find lnk-sqlite") {
		t.Fatalf("sqlite with no lnk-sqlite: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.Root, socketDir)); err == nil {
		t.Fatal("a socket folder made with no plugin to listen there")
	}
	o := Set{}.Openers(p)
	for _, name := range Names() {
		if o[name] == nil {
			t.Errorf("no opener of %s", name)
		}
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

// A program built from a checkout (go run ./cmd/lnk, or this test) with
// no plugin beside it nor in $PATH builds the plugin from the same
// source into the user's cache folder, and runs it.
func TestFromSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin")
	}
	if _, err := sourceRoot(); err != nil {
		t.Skipf("this test binary names no checkout (built with -trimpath?): %v", err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	// go's own caches stay where they are: the cache folder moved is the
	// plugin's alone.
	goEnv, err := exec.Command(goTool, "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range strings.Fields(string(goEnv)) {
		t.Setenv([]string{"GOCACHE", "GOMODCACHE", "GOPATH"}[i], v)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // os.UserCacheDir on Linux and BSD
	t.Setenv("HOME", cache)           // on macOS: $HOME/Library/Caches
	t.Setenv("PATH", filepath.Dir(goTool))
	prog, err := FindPlugin("sqlite", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(prog, cache) || filepath.Base(prog) != "lnk-sqlite" {
		t.Fatalf("built %s, want lnk-sqlite in %s", prog, cache)
	}
	out, err := exec.Command(prog, "serve", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "usage: lnk-sqlite serve") {
		t.Fatalf("%s serve --help: %v\n%s", prog, err, out)
	}
	// Once built, this process finds it again without building.
	if again, err := FindPlugin("sqlite", nil); err != nil || again != prog {
		t.Fatalf("found again: %q, %v; want %s", again, err, prog)
	}
}
