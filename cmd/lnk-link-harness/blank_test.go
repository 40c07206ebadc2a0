//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
	storelog "github.com/lnk-dev/link/store/log"
)

// startBlank runs the real program as a blank unit on a control socket
// of its own; done is closed once Run returned nil.
func startBlank(t *testing.T, extra ...string) (m *Main, ctl string, stderr *syncBuffer, done chan struct{}) {
	t.Helper()
	ctl = filepath.Join(t.TempDir(), "ctl")
	stderr = &syncBuffer{}
	m = NewMain(&syncBuffer{}, stderr, map[string]string{})
	if err := m.ParseFlags(append([]string{"serve", "--blank", ctl, "--model", "offline"}, extra...)); err != nil {
		t.Fatal(err)
	}
	done = make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		err := m.Run(context.Background())
		errc <- err
		if err == nil {
			close(done)
		}
	}()
	select {
	case <-m.Ready():
	case err := <-errc:
		t.Fatalf("run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not listening")
	}
	t.Cleanup(func() { m.Close() })
	return m, ctl, stderr, done
}

// bind sends one control line and returns the unit's answer.
func bind(t *testing.T, ctl, line string) map[string]string {
	t.Helper()
	c, err := net.Dial("unix", ctl)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
	b, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		t.Fatalf("no answer to %q: %v", line, err)
	}
	var got map[string]string
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("answer %q: %v", b, err)
	}
	return got
}

func freeTestPort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// A blank unit holds nothing until one line binds it: a malformed line is
// refused and leaves it blank; the bind is answered with the endpoint and
// a key made for it, and the unit answers as that agent at once, its
// settings the line's; a second bind is refused; each refusal is logged;
// and once its agent sleeps, the unit ends.
func TestBlank(t *testing.T) {
	_, ctl, stderr, done := startBlank(t, "--sleep-after", "500ms")
	if fi, err := os.Stat(ctl); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("control socket %v, %v", fi, err)
	}
	home := t.TempDir()
	port := freeTestPort(t)
	for _, bad := range []string{`{not json`, `{"agent":"main","home":"relative","port":` + strconv.Itoa(port) + `}`, `{"agent":"main","home":"/h","port":1,"extra":1}`, `{"agent":"main","home":"/h","port":1,"settings":{"model":"x"}}`} {
		if got := bind(t, ctl, bad); got["error"] == "" || got["key"] != "" {
			t.Errorf("%s: answered %v", bad, got)
		}
	}
	line := `{"agent":"main","id":"id-1","home":"` + home + `","port":` + strconv.Itoa(port) + `,"settings":{"chat":{"verbose":false}}}`
	got := bind(t, ctl, line)
	if got["endpoint"] != "http://127.0.0.1:"+strconv.Itoa(port)+"/acp" || len(got["key"]) != 64 {
		t.Fatalf("bound: %v", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if answer, err := sayAs(ctx, got["endpoint"], []byte(got["key"]), "main", "telegram:1", "hello"); err != nil || !strings.Contains(answer, "hello") {
		t.Fatalf("answered %q, %v", answer, err)
	}
	if err := dialAs(t, got["endpoint"], "main", "id-2"); err == nil {
		t.Fatal("another ID answered")
	}
	if again := bind(t, ctl, line); !strings.Contains(again["error"], "bound already") {
		t.Fatalf("a second bind: %v", again)
	}
	if n := strings.Count(stderr.String(), "control line refused"); n != 5 {
		t.Errorf("%d refusals logged, want 5: %s", n, stderr.String())
	}
	if strings.Contains(stderr.String(), got["key"]) {
		t.Error("the key was logged")
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the unit went on after its agent slept")
	}
}

// A control line is at most 64 KiB (docs/agents.md): a bind whose
// settings make it longer than a read buffer's 4 KiB is bound, and one
// past 64 KiB is refused naming the bound, the unit left blank.
func TestBlankLongLine(t *testing.T) {
	_, ctl, _, _ := startBlank(t)
	port := freeTestPort(t)
	prefix := `{"agent":"main","home":"` + t.TempDir() + `","port":` + strconv.Itoa(port)
	aliases := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"alias-` + strconv.Itoa(i) + `":"anthropic/claude-opus-5-5"`)
		}
		return `,"settings":{"model":{"aliases":{` + b.String() + `}}}}`
	}
	long := prefix + aliases(2000)
	if len(long) <= maxBindLine {
		t.Fatalf("the long line is %d bytes, want past %d", len(long), maxBindLine)
	}
	if got := bind(t, ctl, long); !strings.Contains(got["error"], "at most 65536 bytes") {
		t.Fatalf("a line of %d bytes: %v", len(long), got)
	}
	line := prefix + aliases(200)
	if len(line) <= 4096 || len(line) > maxBindLine {
		t.Fatalf("the line is %d bytes, want 4 KiB to 64 KiB", len(line))
	}
	if got := bind(t, ctl, line); got["endpoint"] != "http://127.0.0.1:"+strconv.Itoa(port)+"/acp" || len(got["key"]) != 64 {
		t.Fatalf("a line of %d bytes: %v", len(line), got)
	}
}

// A line from a peer that isn't the socket's owner is refused, and the
// unit stays blank (run as root: the peer is the helper as nobody).
func TestBlankPeerNotOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to connect as another user")
	}
	_, ctl, stderr, _ := startBlank(t)
	// Let the other user reach the socket and run this test binary: the
	// peer check alone stops it.
	os.Chmod(filepath.Dir(filepath.Dir(ctl)), 0o755)
	os.Chmod(filepath.Dir(ctl), 0o755)
	os.Chmod(ctl, 0o666)
	dir, err := os.MkdirTemp("", "blank-peer-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(dir, "helper")
	if err := os.WriteFile(helper, self, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	cmd := exec.Command(helper, "-test.run=^TestBlankPeerHelper$")
	cmd.Env = append(os.Environ(), "LNK_TEST_BLANK_CTL="+ctl, "LNK_TEST_BLANK_LINE="+`{"agent":"main","home":"/tmp","port":`+strconv.Itoa(freeTestPort(t))+`}`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "isn't the socket's owner") {
		t.Fatalf("the other user's line was answered %s", out)
	}
	if !strings.Contains(stderr.String(), "control line refused") {
		t.Fatalf("not logged: %s", stderr.String())
	}
	// Still blank: its owner binds it.
	if got := bind(t, ctl, `{"agent":"main","home":"`+t.TempDir()+`","port":`+strconv.Itoa(freeTestPort(t))+`}`); got["key"] == "" {
		t.Fatalf("after the refusal, the owner's bind: %v", got)
	}
}

// TestBlankPeerHelper sends a control line as whoever runs it, for
// TestBlankPeerNotOwner, and prints the answer.
func TestBlankPeerHelper(t *testing.T) {
	ctl := os.Getenv("LNK_TEST_BLANK_CTL")
	if ctl == "" {
		t.Skip("run by TestBlankPeerNotOwner")
	}
	c, err := net.Dial("unix", ctl)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(os.Getenv("LNK_TEST_BLANK_LINE") + "\n"))
	b, _ := bufio.NewReader(c).ReadBytes('\n')
	os.Stdout.Write(b)
}

// A unit bound with a store bridge keeps its conversations through it:
// the bridge's driver holds the events, the home none.
func TestBlankStoreBridge(t *testing.T) {
	kept := t.TempDir()
	bkey := "bridge-key-0123456789abcdef"
	srv, err := bridge.NewServer(bridge.ServerConfig{Store: storelog.Open(kept), Key: []byte(bkey)})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "store.sock")
	ln, err := bridge.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	go srv.Serve(ctx, ln)
	_, ctl, _, _ := startBlank(t)
	home := t.TempDir()
	got := bind(t, ctl, `{"agent":"main","home":"`+home+`","port":`+strconv.Itoa(freeTestPort(t))+`,"store":{"driver":"remote","socket":"`+sock+`","key":"`+bkey+`"}}`)
	if got["key"] == "" {
		t.Fatalf("bound: %v", got)
	}
	if answer, err := sayAs(ctx, got["endpoint"], []byte(got["key"]), "main", "telegram:5", "kept elsewhere"); err != nil || !strings.Contains(answer, "kept elsewhere") {
		t.Fatalf("answered %q, %v", answer, err)
	}
	ev, err := storelog.Open(kept).Read(ctx, "telegram:5", 1)
	if err != nil || len(ev) < 2 || ev[0].Text != "kept elsewhere" {
		t.Fatalf("the bridge's driver holds %+v, %v", ev, err)
	}
	p, _ := store.For(home, "main")
	if local, err := storelog.Open(p.Chats()).Read(ctx, "telegram:5", 1); err == nil && len(local) > 0 {
		t.Fatalf("the home holds %d events too", len(local))
	}
}

// A control line is outside input: whatever it holds, it is read or
// refused, and what is read follows every rule.
func FuzzParseBind(f *testing.F) {
	f.Add([]byte(`{"agent":"main","id":"id-1","home":"/h","port":18800,"settings":{"chat":{"verbose":true}},"store":{"driver":"sqlite","socket":"/s","key":"k0123"}}`))
	f.Add([]byte(`{"agent":"main","home":"/h","port":0}`))
	f.Add([]byte(`{"agent":"main","home":"/h","port":1,"settings":null} {}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, set, err := parseBind(b)
		if err != nil {
			return
		}
		if l.Port < 1 || l.Port > 65535 || !filepath.IsAbs(l.Home) || (l.Store != nil && set.Conversations != l.Store.Driver) {
			t.Fatalf("read %+v, %+v", l, set)
		}
	})
}
