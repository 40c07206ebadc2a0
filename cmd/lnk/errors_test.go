package main

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// A port taken when lnk agent chat starts the agent there names who
// holds it (this process, on Linux) and what to do next.
func TestChatPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // takes connections, answers nothing
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	code, _, errOut := chatIn(t, map[string]string{"LNK_HOME": t.TempDir(), "LNK_PORT": port}, "")
	if code != 1 || !strings.Contains(errOut, "port "+port+" is taken by") || !strings.Contains(errOut, "say another $LNK_PORT") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if runtime.GOOS == "linux" && !strings.Contains(errOut, "process "+strconv.Itoa(os.Getpid())+" (") {
		t.Fatalf("the holder isn't named: %s", errOut)
	}
}

// A key file that isn't there says how to make one, and lnk agent key
// makes it, the owner's alone, once.
func TestKeyFileMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "endpoint.key")
	code, _, errOut := sendRun(t, map[string]string{"LNK_HOME": t.TempDir()}, "--endpoint", "http://127.0.0.1:1/acp", "--key-file", missing, "hi")
	if code != 1 || !strings.Contains(errOut, "no key file at "+missing+": make one with `lnk agent key --key-file "+missing+"`") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, out, errOut := chatRun("agent", "key", "--key-file", missing)
	if code != 0 || out != missing+"\n" {
		t.Fatalf("lnk agent key: %d %q %s", code, out, errOut)
	}
	b, err := os.ReadFile(missing)
	fi, _ := os.Stat(missing)
	if err != nil || len(strings.TrimSpace(string(b))) != 64 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %q %v %v", b, err, fi.Mode())
	}
	if code, _, _ := chatRun("agent", "key", "--key-file", missing); code != 0 {
		t.Fatal("again")
	}
	if b2, _ := os.ReadFile(missing); string(b2) != string(b) {
		t.Fatal("the key was made again")
	}
}

// A model no provider here serves says which variable to set.
func TestChatModelWithoutKey(t *testing.T) {
	code, _, errOut := chatIn(t, map[string]string{"LNK_HOME": t.TempDir()}, "/quit\n", "--model", "anthropic/claude-opus-5-5")
	if code != 0 || !strings.Contains(errOut, "no provider here serves it") || !strings.Contains(errOut, "set ANTHROPIC_API_KEY or OPENROUTER_API_KEY") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
