package drivers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/sqlite"
	"github.com/lnk-dev/link/store/storetest"
)

// envServeArgs, set, makes this test binary a plugin with the arguments
// it holds (JSON: the driver's name, then the plugin's arguments), in
// TestPluginHelper: a real process of the program.
const envServeArgs = "LNK_TEST_PLUGIN_ARGS"

// testPlugin is a plugin of the log's or SQLite's, as lnk-sqlite is.
func testPlugin(name string) Plugin {
	return Plugin{Name: name, Open: func(_ context.Context, p store.Paths, _ map[string]string) (store.Conversations, error) {
		if name == sqlite.Name {
			return sqlite.Open(p.Chats())
		}
		return log.Open(p.Chats()), nil
	}}
}

// TestPluginHelper is a plugin, run only in a process of its own.
func TestPluginHelper(t *testing.T) {
	raw := os.Getenv(envServeArgs)
	if raw == "" {
		t.Skip("a plugin in a process of its own, for TestPluginProcess")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := testPlugin(args[0]).Run(ctx, args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// pluginProcess starts a plugin with args in a process of its own and
// waits for its first line; stop sends it SIGTERM and gives its exit
// status.
func pluginProcess(t *testing.T, args ...string) (line string, stderr *bytes.Buffer, stop func() error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPluginHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), envServeArgs+"="+string(raw))
	stderr = &bytes.Buffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		l, _ := r.ReadString('\n')
		lines <- l
		io.Copy(io.Discard, r)
		exited <- cmd.Wait()
	}()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
			return errors.New("the plugin didn't end within 20s of SIGTERM")
		}
	}
	t.Cleanup(func() { stop() })
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatalf("the plugin said nothing in 30s; stderr:\n%s", stderr)
	}
	if line == "" {
		t.Fatalf("the plugin ended; stderr:\n%s", stderr)
	}
	return strings.TrimSpace(line), stderr, stop
}

// pluginHome is a Link home and a key file for agent main.
func pluginHome(t *testing.T) (home, keyFile string, p store.Paths) {
	home = t.TempDir()
	p, err := store.For(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	keyFile = filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("the-agent-key-of-main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, keyFile, p
}

// TestPluginProcess runs a plugin as a process of its own, on a unix
// socket over the log and on a loopback port over sqlite, and
// keeps a conversation through it: what the bridge appended is in the
// driver's own files, the lease holds, and SIGTERM ends it cleanly.
func TestPluginProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	home, keyFile, p := pluginHome(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	if len(sock) > 100 {
		dir, err := os.MkdirTemp("", "lnk")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		sock = filepath.Join(dir, "s.sock")
	}
	for _, tc := range []struct {
		driver string
		where  []string
		read   func() store.Conversations
	}{
		{"log", []string{"--socket", sock}, func() store.Conversations { return log.Open(p.Chats()) }},
		{"sqlite", []string{"--listen", "127.0.0.1:0"}, func() store.Conversations {
			d, err := sqlite.Open(p.Chats())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			return d
		}},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			args := append([]string{tc.driver, "serve", "--driver", tc.driver, "--home", home, "--agent", "main", "--key-file", keyFile}, tc.where...)
			line, stderr, stop := pluginProcess(t, args...)
			network, addr, ok := strings.Cut(strings.TrimPrefix(line, "serving "+tc.driver+" conversations of main on "), ":")
			if !ok || !strings.HasPrefix(line, "serving ") {
				t.Fatalf("first line %q", line)
			}
			ctx := context.Background()
			c, err := bridge.Dial(ctx, bridge.Config{Network: network, Address: addr, Key: []byte("the-agent-key-of-main")})
			if err != nil {
				t.Fatalf("dial %s %s: %v\nstderr:\n%s", network, addr, err, stderr)
			}
			defer c.Close()
			want := storetest.Events(5, tc.driver)
			for _, e := range want {
				if err := c.Append(ctx, "telegram:42", e); err != nil {
					t.Fatal(err)
				}
			}
			// The last sent again is the same append; another event isn't.
			if err := c.Append(ctx, "telegram:42", want[4]); err != nil {
				t.Fatalf("append #5 again, the same: %v", err)
			}
			other := want[4]
			other.Text = "another"
			if err := c.Append(ctx, "telegram:42", other); !errors.Is(err, store.ErrSeqTaken) {
				t.Fatalf("append #5 again, another: %v, want ErrSeqTaken", err)
			}
			got, err := c.Read(ctx, "telegram:42", 1)
			if err != nil {
				t.Fatal(err)
			}
			storetest.Same(t, "read through the bridge", got, want)
			latest, err := c.Latest(ctx, "telegram:42", 2)
			if err != nil {
				t.Fatal(err)
			}
			storetest.Same(t, "latest through the bridge", latest, want[3:])
			if _, err := c.Lease(ctx, "telegram:42", "turn-1", time.Minute); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Lease(ctx, "telegram:42", "turn-2", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
				t.Fatalf("lease held by turn-1, for turn-2: %v, want ErrLeaseHeld", err)
			}
			// A wrong key is refused.
			if _, err := bridge.Dial(ctx, bridge.Config{Network: network, Address: addr, Key: []byte("not-it")}); !errors.Is(err, bridge.ErrRefused) {
				t.Fatalf("dial with the wrong key: %v, want ErrRefused", err)
			}
			if err := stop(); err != nil {
				t.Fatalf("the plugin after SIGTERM: %v\nstderr:\n%s", err, stderr)
			}
			// What it wrote is the driver's, read without the bridge.
			got, err = tc.read().Read(ctx, "telegram:42", 1)
			if err != nil {
				t.Fatal(err)
			}
			storetest.Same(t, "read from the driver's files", got, want)
			if network == "unix" {
				if _, err := os.Lstat(addr); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("socket left after the bridge ended: %v", err)
				}
			}
			if strings.Contains(stderr.String(), "the-agent-key-of-main") {
				t.Fatalf("the key is in the bridge's log:\n%s", stderr)
			}
		})
	}
}

// A plugin's usage names its flags, and a usage it can't follow is
// refused with the rule it broke, before anything listens.
func TestPluginUsage(t *testing.T) {
	home, keyFile, _ := pluginHome(t)
	pl := testPlugin("gcs")
	runPlugin := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := pl.Run(context.Background(), args, func(string) string { return "" }, &out, &errOut)
		return code, out.String() + errOut.String()
	}
	code, said := runPlugin("serve", "--help")
	if code != 0 {
		t.Fatalf("--help: status %d", code)
	}
	for _, want := range []string{"lnk-gcs serve", "--key-file", "--socket", "--listen", "-gcs-bucket", "LNK_GCS_BUCKET", "each call proved"} {
		if !strings.Contains(said, want) {
			t.Errorf("--help doesn't say %q:\n%s", want, said)
		}
	}
	if code, said := runPlugin("listen"); code != 2 || !strings.Contains(said, "usage: lnk-gcs serve") {
		t.Errorf("no serve: status %d, said %q", code, said)
	}
	base := []string{"serve", "--home", home}
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"no key", []string{"--socket", "x"}, 2, "say --key-file"},
		{"both", []string{"--key-file", keyFile, "--socket", "x", "--listen", "127.0.0.1:0"}, 2, "at most one of --socket and --listen"},
		{"another driver", []string{"--driver", "sqlite", "--key-file", keyFile, "--listen", "127.0.0.1:0"}, 2, `runs the gcs driver, not "sqlite"`},
		{"not loopback", []string{"--key-file", keyFile, "--listen", "0.0.0.0:0"}, 1, "only a loopback address"},
		{"no key file", []string{"--key-file", filepath.Join(home, "none"), "--listen", "127.0.0.1:0"}, 1, "read the key"},
		{"bad agent", []string{"--agent", "Not/Ok", "--key-file", keyFile, "--listen", "127.0.0.1:0"}, 1, "agent"},
	} {
		code, said := runPlugin(append(base, tc.args...)...)
		if code != tc.code || !strings.Contains(said, tc.says) {
			t.Errorf("%s: status %d, said %q; want %d saying %q", tc.name, code, said, tc.code, tc.says)
		}
	}
	// An empty key file is refused before anything listens.
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	if code, said := runPlugin(append(base, "--key-file", empty, "--listen", "127.0.0.1:0")...); code != 1 || !strings.Contains(said, "key") {
		t.Errorf("an empty key file: status %d, said %q", code, said)
	}
	var errOut bytes.Buffer
	if code := (Plugin{Name: "nosuch"}).Run(context.Background(), []string{"serve"}, func(string) string { return "" }, io.Discard, &errOut); code != 2 || !strings.Contains(errOut.String(), "no such driver") {
		t.Errorf("a plugin of no driver of Link's: status %d, said %q", code, errOut.String())
	}
}
