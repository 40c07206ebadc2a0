package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store"
)

// memoryServeRun is one lnk memory serve on home at laddr, with args
// after: the address it printed, and a stop that ends it and gives what
// it said on stderr.
func memoryServeRun(t *testing.T, home, laddr string, args ...string) (url string, stop func() string) {
	t.Helper()
	return serveRun(t, append([]string{"memory", "serve", "--home", home, "--listen", laddr}, args...)...)
}

// serveRun is one lnk <tool> serve, argv its words: the address it
// printed, and a stop that ends it and gives what it said on stderr.
func serveRun(t *testing.T, argv ...string) (url string, stop func() string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	var errb safeBuffer
	done := make(chan int, 1)
	go func() {
		code := NewMain(pw, &errb, map[string]string{}).Run(ctx, argv)
		pw.Close()
		done <- code
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("lnk %s printed no address (exit %d): %s", strings.Join(argv[:2], " "), <-done, errb.String())
	}
	go io.Copy(io.Discard, pr)
	return strings.TrimSpace(line), func() string {
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("lnk %s: exit %d: %s", strings.Join(argv[:2], " "), code, errb.String())
		}
		return errb.String()
	}
}

// answers is the status a memory server gives an MCP initialize at url.
func answers(t *testing.T, url string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// lnk memory serve restarted on the same home and port answers at the
// same address, so $LNK_MEMORY set once (an agents file's env) stays
// true; its secret is in memory/secret, 0600. A secret file others may
// read is made anew, said on stderr without the secret, and the old
// address is refused; --new-secret makes a new one too. No secret is
// ever said on stderr.
func TestMemoryServeKeepsItsAddress(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	home, laddr := t.TempDir(), fmt.Sprintf("127.0.0.1:%d", port)
	first, stop := memoryServeRun(t, home, laddr)
	if !strings.HasPrefix(first, "http://"+laddr+"/mcp/") || answers(t, first) != http.StatusOK {
		t.Fatalf("first start: %q", first)
	}
	said := stop()
	again, stop := memoryServeRun(t, home, laddr)
	if again != first {
		t.Fatalf("restarted, it answers at another address: %q, was %q", again, first)
	}
	if code := answers(t, first); code != http.StatusOK {
		t.Fatalf("the first address after a restart: %d", code)
	}
	said += stop()

	p, _ := store.For(home, "main")
	fi, err := os.Stat(p.ToolSecret("memory"))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Fatalf("memory/secret is %04o, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(p.ToolSecret("memory"))
	if secret := strings.TrimSpace(string(b)); !strings.HasSuffix(first, "/mcp/"+secret) || len(secret) != 43 {
		t.Fatalf("memory/secret holds %q, the address is %q", b, first)
	}

	// Readable by others: its secret may be known, so a new one.
	if runtime.GOOS != "windows" {
		if err := os.Chmod(p.ToolSecret("memory"), 0o644); err != nil {
			t.Fatal(err)
		}
		third, stop := memoryServeRun(t, home, laddr)
		if third == first || answers(t, first) != http.StatusNotFound || answers(t, third) != http.StatusOK {
			t.Fatalf("after the secret file was made readable by others it answers at %q (was %q)", third, first)
		}
		errs := stop()
		if !strings.Contains(errs, "readable by others (mode 0644, not 0600)") || !strings.Contains(errs, "made a new secret") {
			t.Fatalf("the new secret wasn't said:\n%s", errs)
		}
		said += errs
		first = third
	}

	// --new-secret: the old address answered no more.
	fourth, stop := memoryServeRun(t, home, laddr, "--new-secret")
	if fourth == first || answers(t, first) != http.StatusNotFound || answers(t, fourth) != http.StatusOK {
		t.Fatalf("--new-secret: %q, was %q", fourth, first)
	}
	said += stop()
	fifth, stop := memoryServeRun(t, home, laddr)
	said += stop()
	if fifth != fourth {
		t.Fatalf("the new secret wasn't kept: %q, then %q", fourth, fifth)
	}
	for _, u := range []string{first, fourth} {
		if strings.Contains(said, u[strings.LastIndex(u, "/")+1:]) {
			t.Fatalf("a secret was said on stderr:\n%s", said)
		}
	}
}
