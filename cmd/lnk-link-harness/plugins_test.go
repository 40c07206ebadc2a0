//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/lnk-dev/link/cmd/internal/drivers/driverstest"
	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/sqlite"
)

// childOf finds the one process whose parent is pid, waiting for it.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	var kids []int
	testwait.For(t, 5*time.Second, fmt.Sprintf("process %d to have one child, its store bridge", pid), func() bool {
		kids = childrenOf(pid)
		return len(kids) == 1
	})
	return kids[0]
}

// childrenOf are the running processes whose parent is pid (Linux's
// /proc).
func childrenOf(pid int) []int {
	var kids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state, ok := procStat(n); ok && ppid == pid && state != 'Z' {
			kids = append(kids, n)
		}
	}
	return kids
}

// procStat reads a process's parent and state from /proc/<pid>/stat.
func procStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}

// waitGone waits until pid runs no more (gone, or a zombie).
func waitGone(t *testing.T, pid int, why string) {
	t.Helper()
	testwait.For(t, 5*time.Second, fmt.Sprintf("the store bridge %d to end %s", pid, why), func() bool {
		_, state, ok := procStat(pid)
		return !ok || state == 'Z'
	})
}

// The drivers lnk-link-harness doesn't link run in their plugins: by
// default reached through the agent's store bridge run beside it, Cloud
// Storage's against a fake-gcs-server (testBesideGCS); told
// --store-child, found beside itself and started as its child on a
// conversation's first message: SQLite's (testSQLite) and Cloud
// Storage's (testGCS). Built once for all.
func TestDriverPlugins(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real programs")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("finds the child in /proc")
	}
	dir := driverstest.Build(t, append(driverstest.Plugins(), driverstest.Module+"/cmd/lnk-link-harness", driverstest.Module+"/cmd/lnk")...)
	bin := filepath.Join(dir, "lnk-link-harness")
	t.Run("beside/gcs", func(t *testing.T) { testBesideGCS(t, dir) })
	t.Run("sqlite", func(t *testing.T) { testSQLite(t, bin) })
	t.Run("gcs", func(t *testing.T) { testGCS(t, bin) })
	t.Run("steered/gcs", func(t *testing.T) { testSteeredProcs(t, dir, "gcs") })
	t.Run("steered/sqlite", func(t *testing.T) { testSteeredProcs(t, dir, sqlite.Name) })
}

// newAgent makes a home whose agent main begins conversations kept by
// driver, and its key file.
func newAgent(t *testing.T, driver string) (home string, p store.Paths, keyFile string) {
	t.Helper()
	home = t.TempDir()
	p, err := store.For(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Config(), []byte(`{"storage": {"conversations": "`+driver+`"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	keyFile = filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, p, keyFile
}

// sendOK sends text on thread and fails unless its answer streamed back.
func sendOK(t *testing.T, proc *harnessProc, thread, text string) {
	t.Helper()
	o := bridgeSend(proc.url, []byte(testKey), thread, text)
	if !o.responded || !strings.Contains(o.text, text) {
		t.Fatalf("%q: answered %v with %q; the harness said: %s", text, o.responded, o.text, proc.stderr.String())
	}
}

// A conversation kept in SQLite (config.json's storage.conversations):
// answered, its child killed and started again at the next message,
// which is answered too; the child stopped with the harness, and ended
// with it when the harness is killed; the conversation goes on after a
// restart, and its events are SQLite's, read directly.
func testSQLite(t *testing.T, bin string) {
	home, p, keyFile := newAgent(t, sqlite.Name)
	env := childEnv(nil)
	const thread = "telegram:7"
	send := func(proc *harnessProc, text string) { t.Helper(); sendOK(t, proc, thread, text) }

	proc := startProc(t, bin, home, keyFile, env, "--model", "offline", "--store-child")
	// Nothing starts before a conversation needs it.
	if _, err := os.Stat(filepath.Join(p.Chats(), sqlite.File)); err == nil {
		t.Fatal("events.sqlite made before any message")
	}
	send(proc, "first in sqlite")
	child := childOf(t, proc.cmd.Process.Pid)
	info, err := os.Stat(filepath.Join(p.Root, "run"))
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("the socket's folder: %v, %v", info, err)
	}
	socket := filepath.Join(p.Root, "run", "store-sqlite-"+strconv.Itoa(proc.cmd.Process.Pid)+".sock")
	if info, err := os.Lstat(socket); err != nil || info.Mode().Type() != os.ModeSocket {
		t.Fatalf("the child's socket %s: %v", socket, err)
	}
	if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, child, "after SIGKILL")
	send(proc, "second, the child started again")
	again := childOf(t, proc.cmd.Process.Pid)
	if again == child {
		t.Fatalf("the same child %d", child)
	}
	proc.stop(t)
	waitGone(t, again, "after the harness stopped")
	if _, err := os.Lstat(socket); err == nil {
		t.Fatal("the socket is left after the harness stopped")
	}

	// Started again on the same store, it goes on with the conversation;
	// killed, its child ends with it.
	proc = startProc(t, bin, home, keyFile, env, "--model", "offline", "--store-child")
	send(proc, "third, after a restart")
	third := childOf(t, proc.cmd.Process.Pid)
	proc.kill()
	waitGone(t, third, "after the harness was killed")

	dir, err := p.Conversation(thread)
	if err != nil {
		t.Fatal(err)
	}
	if kind, err := driver.Of(dir); err != nil || kind != sqlite.Name {
		t.Fatalf("the conversation is kept %q (%v), want sqlite", kind, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "events.jsonl")); err == nil {
		t.Fatal("the conversation's folder holds events.jsonl")
	}
	d, err := sqlite.Open(p.Chats())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	evs, err := d.Read(t.Context(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	said, answers := conversation(t, evs)
	want := []string{"first in sqlite", "second, the child started again", "third, after a restart"}
	if strings.Join(said, "|") != strings.Join(want, "|") {
		t.Fatalf("SQLite holds the messages %q, want %q", said, want)
	}
	if len(answers) < 3 || !strings.Contains(answers[len(answers)-1], want[2]) {
		t.Fatalf("SQLite holds the answers %q", answers)
	}
}

// conversation is what a conversation's events say: its messages and
// final answers, in order; it fails the test unless they are numbered
// from 1, one after the other.
func conversation(t *testing.T, evs []store.Event) (messages, answers []string) {
	t.Helper()
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d is numbered %d", i, e.Seq)
		}
		switch {
		case e.Kind == store.KindMessage:
			messages = append(messages, e.Text)
		case store.FinalAnswer(e):
			answers = append(answers, e.Text)
		}
	}
	return messages, answers
}

// fakeBucket is a fake-gcs-server on the loopback holding the bucket
// chats, stopped at the test's end; its endpoint is its URL and
// /storage/v1/.
func fakeBucket(t *testing.T) *fakestorage.Server {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "chats"})
	return srv
}

// A conversation kept in Cloud Storage, the bucket and endpoint from the
// harness's environment ($LNK_GCS_BUCKET, $LNK_GCS_ENDPOINT): answered,
// its folder holding only the marker, its events objects in the bucket.
func testGCS(t *testing.T, bin string) {
	srv := fakeBucket(t)
	home, p, keyFile := newAgent(t, "gcs")
	env := childEnv(map[string]string{"LNK_GCS_BUCKET": "chats", "LNK_GCS_ENDPOINT": srv.URL() + "/storage/v1/"})
	proc := startProc(t, bin, home, keyFile, env, "--model", "offline", "--store-child")
	sendOK(t, proc, "telegram:9", "kept in a bucket")
	sendOK(t, proc, "telegram:9", "and again")
	child := childOf(t, proc.cmd.Process.Pid)
	proc.stop(t)
	waitGone(t, child, "after the harness stopped")

	dir, err := p.Conversation("telegram:9")
	if err != nil {
		t.Fatal(err)
	}
	if kind, err := driver.Of(dir); err != nil || kind != "gcs" {
		t.Fatalf("the conversation is kept %q (%v), want gcs", kind, err)
	}
	objs, _, err := srv.ListObjectsWithOptions("chats", fakestorage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.Name)
	}
	if len(names) < 4 || !strings.Contains(strings.Join(names, " "), "agents/main/chats/") {
		t.Fatalf("the bucket holds %q, want the conversation's events", names)
	}
}
