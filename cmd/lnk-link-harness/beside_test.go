//go:build unix

package main

import (
	"bufio"
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
	"github.com/lnk-dev/link/store/driver"
)

// startBridge starts the agent's store bridge, prog serve with args, in
// env, and waits for the line that says where it answers; it is stopped
// (SIGTERM) at the test's end.
func startBridge(t *testing.T, prog string, env []string, args ...string) (cmd *exec.Cmd, line string, stderr *syncBuffer) {
	t.Helper()
	cmd = exec.Command(prog, append([]string{"serve"}, args...)...)
	cmd.Env = env
	stderr = &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() {
		}
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	})
	select {
	case line = <-lines:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s didn't listen: %s", prog, stderr.String())
	}
	if line == "" {
		t.Fatalf("%s ended: %s", prog, stderr.String())
	}
	return cmd, line, stderr
}

// procEnviron is a process's environment, from /proc/<pid>/environ.
func procEnviron(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
}

// cloudSetting is the first variable of env that says anything of Cloud
// Storage: a setting of lnk-gcs's, Google's credentials or project, its
// emulator.
func cloudSetting(env []string) string {
	for _, kv := range env {
		for _, p := range []string{"LNK_GCS_", "GOOGLE_", "STORAGE_EMULATOR_HOST", "CLOUDSDK_", "GCE_METADATA"} {
			if strings.HasPrefix(kv, p) {
				return kv
			}
		}
	}
	return ""
}

// The spec's way: a conversation kept in Cloud Storage (a
// fake-gcs-server) through the agent's store bridge, lnk-gcs serve, run
// beside Link Harness and holding the bucket's settings in its own
// environment alone. The harness, lnk-link-harness serve as installed, is
// told nothing of the bucket: its process environment (/proc/PID/environ)
// holds no Cloud Storage setting while the bridge's does; it starts no
// child; messages are answered, the events are in the bucket, and after
// the harness is stopped and started again the conversation goes on from
// where it was, every message and answer read back through the bridge.
func testBesideGCS(t *testing.T, dir string) {
	srv := fakeBucket(t)
	home, p, keyFile := newAgent(t, "gcs")
	bridgeEnv := childEnv(map[string]string{"LNK_GCS_BUCKET": "chats", "LNK_GCS_ENDPOINT": srv.URL() + "/storage/v1/"})
	b, line, _ := startBridge(t, filepath.Join(dir, "lnk-gcs"), bridgeEnv, "--home", home, "--agent", "main", "--key-file", keyFile)
	socket := filepath.Join(p.Root, "run", "store-gcs.sock")
	if want := "serving gcs conversations of main on unix:" + socket; line != want {
		t.Fatalf("the bridge said %q, want %q", line, want)
	}
	if env := procEnviron(t, b.Process.Pid); !slices.Contains(env, "LNK_GCS_BUCKET=chats") {
		t.Fatalf("the bridge's environment holds no bucket: %q", env)
	}

	// The harness's environment is the test's without anything of Cloud
	// Storage's (this machine's may say gcloud's certificates).
	var harnessEnv []string
	for _, kv := range childEnv(nil) {
		if cloudSetting([]string{kv}) == "" {
			harnessEnv = append(harnessEnv, kv)
		}
	}
	const thread = "telegram:9"
	bin := filepath.Join(dir, "lnk-link-harness")
	said := []string{"kept in a bucket, through the bridge", "and again", "after a restart"}
	proc := startProc(t, bin, home, keyFile, harnessEnv, "--model", "offline")
	sendOK(t, proc, thread, said[0])
	sendOK(t, proc, thread, said[1])
	pid := proc.cmd.Process.Pid
	if kv := cloudSetting(procEnviron(t, pid)); kv != "" {
		t.Fatalf("the harness's environment holds %s", kv)
	}
	if kids := childrenOf(pid); len(kids) != 0 {
		t.Fatalf("the harness started %v: its driver is the bridge beside it", kids)
	}
	proc.stop(t)

	proc = startProc(t, bin, home, keyFile, harnessEnv, "--model", "offline")
	sendOK(t, proc, thread, said[2])
	if kv := cloudSetting(procEnviron(t, proc.cmd.Process.Pid)); kv != "" {
		t.Fatalf("the harness started again holds %s", kv)
	}
	proc.stop(t)

	dir2, err := p.Conversation(thread)
	if err != nil {
		t.Fatal(err)
	}
	if kind, err := driver.Of(dir2); err != nil || kind != "gcs" {
		t.Fatalf("the conversation is kept %q (%v), want gcs", kind, err)
	}
	objs, _, err := srv.ListObjectsWithOptions("chats", fakestorage.ListOptions{Prefix: "agents/main/chats/"})
	if err != nil || len(objs) < 6 {
		t.Fatalf("the bucket holds %d of the agent's objects (%v), want its events", len(objs), err)
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	c, err := bridge.Dial(t.Context(), bridge.Config{Network: "unix", Address: socket, Key: bytes.TrimSpace(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	evs, err := c.Read(t.Context(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	msgs, answers := conversation(t, evs)
	if strings.Join(msgs, "|") != strings.Join(said, "|") {
		t.Fatalf("the bucket holds the messages %q, want %q", msgs, said)
	}
	if len(answers) != len(said) || !strings.Contains(answers[2], said[2]) {
		t.Fatalf("the bucket holds the answers %q", answers)
	}
}

// --store-child is the harness's choice to start its drivers' plugins
// itself; a blank unit, whose conversations go through the bridge it is
// bound with, refuses it.
func TestStoreChildFlag(t *testing.T) {
	m := NewMain(&syncBuffer{}, &syncBuffer{}, nil)
	if err := m.ParseFlags([]string{"serve", "--key-file", "/k", "--store-child"}); err != nil || !m.StoreChild {
		t.Fatalf("--store-child: %v, StoreChild %v", err, m.StoreChild)
	}
	m = NewMain(&syncBuffer{}, &syncBuffer{}, nil)
	if err := m.ParseFlags([]string{"serve", "--key-file", "/k"}); err != nil || m.StoreChild {
		t.Fatalf("no --store-child: %v, StoreChild %v", err, m.StoreChild)
	}
	err := NewMain(&syncBuffer{}, &syncBuffer{}, nil).ParseFlags([]string{"serve", "--blank", "/ctl", "--store-child"})
	if err == nil || !strings.Contains(err.Error(), "--store-child is the binding's with --blank") {
		t.Fatalf("--blank --store-child: %v", err)
	}
}

// serve --stdio proves calls to the agent's store bridge with its key
// file's key, else the agent's endpoint.key (lnk agent chat's bridge's),
// else a key of its own.
func TestStdioKey(t *testing.T) {
	home := t.TempDir()
	p, err := store.For(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	m := &Main{Home: home, Agent: "main"}
	own, err := m.stdioKey(p, logger)
	if err != nil || len(own) != 32 {
		t.Fatalf("with no key at all: %d bytes, %v", len(own), err)
	}
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.KeyFile(), []byte("the-agent-endpoint-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if k, err := m.stdioKey(p, logger); err != nil || string(k) != "the-agent-endpoint-key" {
		t.Fatalf("with the agent's endpoint.key: %q, %v", k, err)
	}
	m.KeyFile = filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(m.KeyFile, []byte("the-key-file-said\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if k, err := m.stdioKey(p, logger); err != nil || string(k) != "the-key-file-said" {
		t.Fatalf("with --key-file: %q, %v", k, err)
	}
}
