package file

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/tools/mcpserve/mcptest"
)

// serve is the file tool of a new workspace served over Streamable HTTP
// on the loopback, and a client's session with it.
func serve(t *testing.T) (*mcp.ClientSession, string) {
	t.Helper()
	w, dir := space(t)
	srv := httptest.NewServer(Handler(w, Options{}))
	t.Cleanup(srv.Close)
	return mcptest.Connect(t, srv.URL), dir
}

// call makes a call, answering its text and whether it failed.
func call(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	return mcptest.Call(t, s, name, args, nil)
}

func TestServerCalls(t *testing.T) {
	s, dir := serve(t)
	init := s.InitializeResult()
	if init.Instructions != Instructions {
		t.Fatal("no instructions")
	}
	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, " ") != "find read replace write" {
		t.Fatalf("tools: %v", names)
	}
	text, failed := call(t, s, "write", map[string]any{"path": "notes/todo.md", "content": "- fix the tpyo\n- call Ann\n"})
	if failed || text != "Made notes/todo.md: 2 lines, 26 bytes." {
		t.Fatal(text)
	}
	text, failed = call(t, s, "replace", map[string]any{"path": "notes/todo.md", "old": "tpyo", "new": "typo"})
	if failed || !strings.Contains(text, "Replaced in notes/todo.md at line 1") || !strings.Contains(text, "     1\t- fix the typo\n") {
		t.Fatal(text)
	}
	text, failed = call(t, s, "read", map[string]any{"path": "notes/todo.md"})
	if failed || text != "notes/todo.md, lines 1-2 of 2 (26 bytes):\n     1\t- fix the typo\n     2\t- call Ann\n" {
		t.Fatalf("%q", text)
	}
	text, failed = call(t, s, "find", map[string]any{"pattern": "Ann"})
	if failed || text != "notes/todo.md:2: - call Ann\n" {
		t.Fatalf("%q", text)
	}
	if get(t, filepath.Join(dir, "notes", "todo.md")) != "- fix the typo\n- call Ann\n" {
		t.Fatal("the file on disk")
	}
}

// Every bad call is answered with its rule, and the server goes on
// serving; a 1 GB file is read, searched and refused an edit within
// bounds; nothing outside the workspace is touched.
func TestServerBadCalls(t *testing.T) {
	s, dir := serve(t)
	outside := filepath.Join(filepath.Dir(dir), "outside")
	before := snapshot(t, outside)
	put(t, filepath.Join(dir, "ok.md"), "fine\ntwice\ntwice\n")
	put(t, filepath.Join(dir, "bin.dat"), "\x00\x01\x02")
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link"))
	mkfifo(filepath.Join(dir, "pipe"))
	big, _ := os.Create(filepath.Join(dir, "big.log"))
	big.WriteString(strings.Repeat("start\n", 2000))
	big.Truncate(1 << 30)
	big.Close()
	for _, c := range []struct {
		call string
		args map[string]any
		want string
	}{
		{"read", map[string]any{"path": "a\x00b"}, "Refused: a path holds no NUL byte"},
		{"read", map[string]any{"path": "../outside/secret.txt"}, "outside the workspace"},
		{"read", map[string]any{"path": "link"}, "outside the workspace"},
		{"read", map[string]any{"path": "pipe"}, "not a regular file"},
		{"read", map[string]any{"path": "/etc/passwd"}, "an absolute path"},
		{"write", map[string]any{"path": "link", "content": "x"}, "a symbolic link"},
		{"replace", map[string]any{"path": "ok.md", "old": "absent", "new": "x"}, "occurs 0 times"},
		{"replace", map[string]any{"path": "ok.md", "old": "twice", "new": "x"}, "occurs 2 times"},
		{"replace", map[string]any{"path": "pipe", "old": "a", "new": "x"}, "not a regular file"},
		{"find", map[string]any{"glob": "[", "path": "."}, "is not a glob"},
		{"find", map[string]any{"path": "../outside"}, "outside the workspace"},
		{"replace", map[string]any{"path": "big.log", "old": "start", "new": "x"}, "over 8 MiB"},
	} {
		text, failed := call(t, s, c.call, c.args)
		if !failed || !strings.Contains(text, c.want) {
			t.Fatalf("%s %v: %q, not refused saying %q", c.call, c.args, text, c.want)
		}
		if text, failed := call(t, s, "read", map[string]any{"path": "ok.md", "lines": 1}); failed || !strings.Contains(text, "fine") {
			t.Fatalf("after %s %v, the server no longer serves: %s", c.call, c.args, text)
		}
	}
	for _, c := range []struct{ path, want string }{{"bin.dat", "a binary file (3 bytes)"}, {"big.log", "lines 1-500 of more, not counted (1073741824 bytes)"}} {
		text, failed := call(t, s, "read", map[string]any{"path": c.path})
		if failed || !strings.Contains(text, c.want) {
			t.Fatalf("read %s: %q", c.path, text)
		}
	}
	text, failed := call(t, s, "find", map[string]any{"pattern": "^start$", "limit": 1})
	if failed || !strings.HasPrefix(text, "big.log:1: start\n") {
		t.Fatalf("find in a 1 GB file: %q", text)
	}
	text, failed = call(t, s, "find", map[string]any{"pattern": "absent", "glob": "*.log"})
	if failed || !strings.Contains(text, "1 files searched only their first 16 MiB") {
		t.Fatalf("find through a 1 GB file: %q", text)
	}
	if snapshot(t, outside) != before {
		t.Fatal("outside the workspace changed")
	}
}
