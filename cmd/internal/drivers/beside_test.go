package drivers

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
	"github.com/lnk-dev/link/store/sqlite"
	"github.com/lnk-dev/link/store/storetest"
)

// A set told Beside reaches a plugin's driver through the agent's store
// bridge at its socket, which the plugin told no --socket listens on:
// before one runs there, a call says where it looked and what to run,
// starting nothing; once it runs, the set's calls go through it into
// the driver's files; a bridge holding another key is said to.
func TestBeside(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	home, keyFile, p := pluginHome(t)
	socket, err := BridgeSocket(p, sqlite.Name)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(p.Root, "run", "store-sqlite.sock"); socket != want {
		t.Fatalf("the bridge's socket %s, want %s", socket, want)
	}
	ctx := t.Context()
	key := []byte("the-agent-key-of-main")
	ds, err := Set{Key: key, Beside: true}.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(ds)
	d := ds[sqlite.Name]
	_, err = d.Read(ctx, "telegram:42", 1)
	if err == nil || !strings.Contains(err.Error(), socket) || !strings.Contains(err.Error(), "run lnk-sqlite serve --home "+home+" --agent main") {
		t.Fatalf("a call with no bridge beside: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.Root, socketDir)); err == nil {
		t.Fatal("the harness's side made the socket's folder")
	}

	line, stderr, stop := pluginProcess(t, sqlite.Name, "serve", "--home", home, "--agent", "main", "--key-file", keyFile)
	if want := "serving sqlite conversations of main on unix:" + socket; line != want {
		t.Fatalf("first line %q, want %q", line, want)
	}
	if info, err := os.Stat(filepath.Dir(socket)); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("the socket's folder: %v, %v", info, err)
	}
	want := storetest.Events(3, sqlite.Name)
	for _, e := range want {
		if err := d.Append(ctx, "telegram:42", e); err != nil {
			t.Fatalf("append through the bridge beside: %v\nits log:\n%s", err, stderr)
		}
	}
	got, err := d.Read(ctx, "telegram:42", 1)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Same(t, "read through the bridge beside", got, want)

	other, err := Set{Key: []byte("another-agent-key"), Beside: true}.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(other)
	if _, err := other[sqlite.Name].Read(ctx, "telegram:42", 1); !errors.Is(err, bridge.ErrRefused) || !strings.Contains(err.Error(), "the agent's key") {
		t.Fatalf("a set of another key: %v, want refused, saying the key", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("the bridge after SIGTERM: %v", err)
	}
	closeAll(ds)
	db, err := sqlite.Open(p.Chats())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err = db.Read(ctx, "telegram:42", 1)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Same(t, "read from events.sqlite", got, want)
}

// closeAll closes each driver that holds something.
func closeAll(ds map[string]store.Conversations) {
	for _, d := range ds {
		if c, ok := d.(store.Closer); ok {
			c.Close()
		}
	}
}
