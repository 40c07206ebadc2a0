//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/lnk-dev/link/cmd/internal/drivers/driverstest"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
)

// An agent whose storage is gcs: lnk agent chat send starts its store
// bridge, lnk-gcs serve, beside the harness it starts, passing it the
// bucket from lnk's environment and its endpoint from lnk's flag
// (--gcs-endpoint); the message goes into the bucket
// through it and is answered, and the bridge ends with lnk. With a bridge
// already running on the agent's socket (a service manager's), lnk uses
// that one, told nothing of the bucket itself, and leaves it running.
func TestSendStoreBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs lnk-gcs")
	}
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "chats"})
	dir := driverstest.Build(t, driverstest.Plugin("gcs"))
	home := t.TempDir()
	p, err := store.For(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Config(), []byte(`{"storage": {"conversations": "gcs"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	endpoint := srv.URL() + "/storage/v1/"
	env := map[string]string{"LNK_HOME": home, "PATH": os.Getenv("PATH"), "LNK_GCS_BUCKET": "chats"}
	socket := filepath.Join(p.Root, "run", "store-gcs.sock")

	code, out, errOut := sendRun(t, env, "--gcs-endpoint", endpoint, "--thread", "link:notes", "kept in a bucket")
	if code != 0 || !strings.Contains(out, "kept in a bucket") {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
	m := regexp.MustCompile(`its gcs store bridge \(lnk-gcs serve, pid (\d+)\) answers on unix:(\S+)`).FindStringSubmatch(errOut)
	if m == nil || m[2] != socket {
		t.Fatalf("lnk didn't say it started the bridge on %s: %s", socket, errOut)
	}
	pid, _ := strconv.Atoi(m[1])
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("the store bridge %d runs after lnk ended", pid)
	}
	objs, _, err := srv.ListObjectsWithOptions("chats", fakestorage.ListOptions{Prefix: "agents/main/chats/"})
	if err != nil || len(objs) < 2 {
		t.Fatalf("the bucket holds %d of the agent's objects (%v), want the message and its answer", len(objs), err)
	}
	conv, _ := p.Conversation("link:notes")
	if kind, err := driver.Of(conv); err != nil || kind != "gcs" {
		t.Fatalf("the conversation is kept %q (%v), want gcs", kind, err)
	}

	// lnk agent status says whether the bridge answers: not now, lnk
	// having stopped the one it started.
	if b := bridgeStatusOf(t, env); b.Driver != "gcs" || b.Socket != socket || b.Answers || b.Error == "" {
		t.Fatalf("status of the bridge with none running: %+v", b)
	}

	// A bridge a service manager runs, holding the bucket; lnk is told
	// nothing of it.
	bridgeCmd := exec.Command(filepath.Join(dir, "lnk-gcs"), "serve", "--home", home, "--agent", "main", "--key-file", p.KeyFile())
	bridgeCmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LNK_GCS_BUCKET=chats", "LNK_GCS_ENDPOINT=" + endpoint}
	stdout, err := bridgeCmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bridgeCmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		bridgeCmd.Process.Signal(syscall.SIGTERM)
		bridgeCmd.Wait()
	}()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); !strings.Contains(line, "on unix:"+socket) {
		t.Fatalf("the bridge said %q", line)
	}
	delete(env, "LNK_GCS_BUCKET")
	code, out, errOut = sendRun(t, env, "--thread", "link:notes", "and through a bridge already there")
	if code != 0 || !strings.Contains(out, "and through a bridge already there") || !strings.Contains(errOut, "its gcs store bridge already answers on unix:"+socket) {
		t.Fatalf("exit %d, %q: %s", code, out, errOut)
	}
	if err := bridgeCmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("lnk stopped the bridge it didn't start: %v", err)
	}
	if b := bridgeStatusOf(t, env); b.Driver != "gcs" || b.Socket != socket || !b.Answers {
		t.Fatalf("status of the bridge running: %+v", b)
	}
	var text, errb safeBuffer
	if code := NewMain(&text, &errb, env).Run(t.Context(), []string{"agent", "status"}); code != 0 || !strings.Contains(text.String(), "its gcs store bridge answers on "+socket) {
		t.Fatalf("agent status: exit %d, said:\n%s%s", code, text.String(), errb.String())
	}
	objs2, _, err := srv.ListObjectsWithOptions("chats", fakestorage.ListOptions{Prefix: "agents/main/chats/"})
	if err != nil || len(objs2) < len(objs)+2 {
		t.Fatalf("the bucket holds %d objects after the second message, %d before (%v)", len(objs2), len(objs), err)
	}
}

// bridgeStatusOf is the one store bridge lnk agent status --json lists.
func bridgeStatusOf(t *testing.T, env map[string]string) bridgeStatus {
	t.Helper()
	var out, errb safeBuffer
	if code := NewMain(&out, &errb, env).Run(t.Context(), []string{"agent", "status", "--json"}); code != 0 {
		t.Fatalf("agent status: exit %d: %s", code, errb.String())
	}
	var st agentStatus
	if err := json.Unmarshal([]byte(out.String()), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Storage.Bridges) != 1 {
		t.Fatalf("status lists the bridges %+v, want gcs's", st.Storage.Bridges)
	}
	return st.Storage.Bridges[0]
}
