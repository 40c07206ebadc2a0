package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// runWithKey runs serve with a key file holding key at mode perm, until
// it is ready (then stops it) or fails; it returns what it wrote to
// stderr, the key file, and Run's error.
func runWithKey(t *testing.T, key string, perm os.FileMode) (stderr, keyFile string, err error) {
	t.Helper()
	keyFile = filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(keyFile, perm); err != nil { // past the umask
		t.Fatal(err)
	}
	errOut := &syncBuffer{}
	m := NewMain(&syncBuffer{}, errOut, map[string]string{})
	if err := m.ParseFlags([]string{"serve", "--home", t.TempDir(), "--port", "0", "--key-file", keyFile, "--model", "offline"}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- m.Run(context.Background()) }()
	select {
	case <-m.Ready():
		m.Close()
		err = <-errc
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("neither ready nor failed")
	}
	return errOut.String(), keyFile, err
}

// TestShortKeyRefused: a key shorter than 16 bytes is refused at start,
// saying so and naming the file; nothing listens.
func TestShortKeyRefused(t *testing.T) {
	_, _, err := runWithKey(t, "k", 0o600)
	if err == nil || !strings.Contains(err.Error(), "the key is 1 bytes, fewer than the 16") || !strings.Contains(err.Error(), "key file ") {
		t.Fatalf("a 1-byte key: %v", err)
	}
	if _, _, err := runWithKey(t, strings.Repeat("k", 16), 0o600); err != nil {
		t.Fatalf("a 16-byte key: %v", err)
	}
}

// TestKeyFileReadableWarned: a key file its group or others can read is
// served with, and warned of on stderr, naming the file; one of 0600
// isn't.
func TestKeyFileReadableWarned(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no group and other bits")
	}
	stderr, keyFile, err := runWithKey(t, testKey, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "the key file can be read by others") || !strings.Contains(stderr, "mode=0644") || !strings.Contains(stderr, keyFile) {
		t.Fatalf("stderr of a 0644 key file:\n%s", stderr)
	}
	if strings.Contains(stderr, testKey) {
		t.Fatalf("the key was logged:\n%s", stderr)
	}
	if stderr, _, _ := runWithKey(t, testKey, 0o600); strings.Contains(stderr, "can be read by others") {
		t.Fatalf("warned of a 0600 key file:\n%s", stderr)
	}
}

// TestAgentsFileReadableWarned: an agents file its group or others can
// read (its env may hold model keys) is served, and warned of on stderr
// as a key file is, naming the file; one of 0600 isn't, and no env value
// is logged.
func TestAgentsFileReadableWarned(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no group and other bits")
	}
	for _, mode := range []os.FileMode{0o644, 0o600} {
		a := &testAgent{line: agentLine{Name: "main", Home: t.TempDir(), Env: map[string]string{"ANTHROPIC_API_KEY": "sk-secret-value"}}, key: []byte(testKey)}
		m, stop := startAgentsFile(t, []*testAgent{a}, mode)
		stop()
		stderr := m.Stderr.(*syncBuffer).String()
		path := filepath.Join(filepath.Dir(a.line.KeyFile), "agents")
		warned := strings.Contains(stderr, "the agents file can be read by others") && strings.Contains(stderr, "file="+path) && strings.Contains(stderr, fmt.Sprintf("mode=%#o", mode))
		if warned != (mode == 0o644) {
			t.Fatalf("stderr of a %#o agents file:\n%s", mode, stderr)
		}
		if strings.Contains(stderr, "sk-secret-value") || strings.Contains(stderr, testKey) {
			t.Fatalf("a secret was logged:\n%s", stderr)
		}
	}
}
