package file

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lnk file serve's process, confined by Landlock to the workspace, is
// refused by the kernel a file outside it and a TCP connection, and still
// serves every call.
func TestConfinedServer(t *testing.T) {
	_, dir := space(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), confinedEnv+"="+dir)
	dieWithTest(cmd)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	r := bufio.NewReader(out)
	var said []string
	for range 4 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the server said %q: %v", said, err)
		}
		said = append(said, strings.TrimSpace(line))
	}
	if said[0] == "abi 0" {
		t.Fatal("this kernel has no Landlock: the test needs it")
	}
	if said[1] != "outside: open "+filepath.Join(filepath.Dir(dir), "outside", "secret.txt")+": permission denied" {
		t.Fatalf("its read outside: %s", said[1])
	}
	if abi, _ := llsyscall.LandlockGetABIVersion(); abi >= 4 && !strings.HasSuffix(said[2], "permission denied") { // TCP from ABI 4 on
		t.Fatalf("its connection: %s", said[2])
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: said[3], DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		call string
		args map[string]any
		want string
	}{
		{"write", map[string]any{"path": "a/b.md", "content": "one\ntwo\n"}, "Made a/b.md"},
		{"replace", map[string]any{"path": "a/b.md", "old": "two", "new": "three"}, "Replaced in a/b.md at line 2"},
		{"read", map[string]any{"path": "a/b.md"}, "     2\tthree\n"},
		{"find", map[string]any{"pattern": "thr"}, "a/b.md:2: three"},
	} {
		text, failed := call(t, s, c.call, c.args)
		if failed || !strings.Contains(text, c.want) {
			t.Fatalf("%s confined: %q", c.call, text)
		}
	}
}
