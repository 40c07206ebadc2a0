package file

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Each call runs on a thread of its own held by Landlock to the
// workspace: from inside a call (a write, halfway), a file outside can't
// be read or made, nor a TCP connection made, by the kernel's refusal,
// not a check of ours; the process's other threads are not held, during
// the call or after many.
func TestCallSandboxed(t *testing.T) {
	w, dir := space(t)
	if w.box.fd < 0 {
		t.Fatal("this kernel has no Landlock: the test needs it")
	}
	outside := filepath.Join(filepath.Dir(dir), "outside")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var readErr, writeErr, dialErr, besideErr error
	midWrite = func() {
		_, readErr = os.ReadFile(filepath.Join(outside, "secret.txt"))
		writeErr = os.WriteFile(filepath.Join(outside, "new.txt"), []byte("x"), 0o644)
		var c net.Conn
		if c, dialErr = net.Dial("tcp", ln.Addr().String()); c != nil {
			c.Close()
		}
		// Another goroutine, on another thread, is not held.
		done := make(chan error)
		go func() {
			_, err := os.ReadFile(filepath.Join(outside, "secret.txt"))
			done <- err
		}()
		besideErr = <-done
	}
	defer func() { midWrite = nil }()
	if _, err := w.Write(context.Background(), "a.txt", []byte("inside\n")); err != nil {
		t.Fatal(err)
	}
	refused := map[string]error{"a read outside": readErr, "a write outside": writeErr}
	if abi, _ := llsyscall.LandlockGetABIVersion(); abi >= 4 { // TCP from ABI 4 on
		refused["a TCP connection"] = dialErr
	}
	for what, err := range refused {
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("%s from inside a call: %v, not refused by the kernel", what, err)
		}
	}
	if besideErr != nil {
		t.Fatalf("a read outside from another goroutine during the call: %v", besideErr)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !os.IsNotExist(err) {
		t.Fatal("a file was made outside:", err)
	}
	midWrite = nil
	for range 50 {
		if _, err := w.Read(context.Background(), "a.txt", 0, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Find(context.Background(), Query{Pattern: "inside"}); err != nil {
			t.Fatal(err)
		}
	}
	// No thread a call held goes back to the runtime: goroutines at once,
	// on whatever threads there are, all read outside.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			if _, err := os.ReadFile(filepath.Join(outside, "secret.txt")); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal("a thread a call held was used again:", err)
	}
}

// BenchmarkSandbox is what a call's sandbox costs: a read of a small
// file, in a thread of its own held by Landlock, and without.
func BenchmarkSandbox(b *testing.B) {
	w, dir := space(b)
	put(b, filepath.Join(dir, "a.md"), "one\ntwo\n")
	for _, c := range []struct {
		name string
		off  bool
	}{{"sandboxed", false}, {"bare", true}} {
		b.Run(c.name, func(b *testing.B) {
			noSandbox.Store(c.off)
			defer noSandbox.Store(false)
			for b.Loop() {
				if _, err := w.Read(context.Background(), "a.md", 0, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
