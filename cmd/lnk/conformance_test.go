package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lnk-dev/link/conformance"
	"github.com/lnk-dev/link/conformance/reference"
)

var resultLine = regexp.MustCompile(`^(PASS|FAIL|NOT RUN) ([a-z0-9-]+) — .+$`)

func runLnk(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// lines are the output's result lines, by check name.
func lines(t *testing.T, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if m := resultLine.FindStringSubmatch(l); m != nil {
			got[m[2]] = l
		}
	}
	if len(got) != len(conformance.Names()) {
		t.Fatalf("%d result lines, want %d:\n%s", len(got), len(conformance.Names()), out)
	}
	return got
}

func TestConformanceReference(t *testing.T) {
	code, out, errOut := runLnk(t, "conformance", "--reference")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for name, l := range lines(t, out) {
		if !strings.HasPrefix(l, "PASS "+name+" — ") {
			t.Errorf("%s", l)
		}
	}
	want := fmt.Sprintf("%d passed, 0 failed, 0 not run\n", len(conformance.Names()))
	if !strings.HasSuffix(out, want) {
		t.Errorf("output ends %q, want %q", out[max(0, len(out)-60):], want)
	}
}

func keyFile(t *testing.T, key []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(f, append(key, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestConformanceEndpoint checks a running endpoint by its flags: the
// checks whose hooks the flags give run and pass, the rest are not run,
// and that is exit 3, not a pass.
func TestConformanceEndpoint(t *testing.T) {
	e, err := reference.Start(t.Context(), reference.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	args := []string{"conformance", "--endpoint", e.URL, "--key-file", keyFile(t, e.Key),
		"--agent", reference.MainAgent, "--agent-id", reference.MainID, "--nameless", "--shared", reference.SharedName,
		"--pid", fmt.Sprint(os.Getpid()), "--tool-prompt", reference.ToolPrompt, "--tool", reference.CalledTool,
		"--recover-prompt", reference.RecoverPrompt}
	code, out, errOut := runLnk(t, args...)
	if code != exitIncomplete {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitIncomplete, out, errOut)
	}
	for name, l := range lines(t, out) {
		wantNotRun := strings.HasPrefix(name, "meta-") || name == "tools-narrow" // need the recording model
		if wantNotRun != strings.HasPrefix(l, "NOT RUN ") || !wantNotRun && !strings.HasPrefix(l, "PASS ") {
			t.Errorf("%s", l)
		}
	}
	if !strings.Contains(errOut, "not a pass") {
		t.Errorf("stderr %q says not that not run is not a pass", errOut)
	}

	// Without --pid, TCP_NODELAY isn't read.
	code, out, _ = runLnk(t, "conformance", "--endpoint", e.URL, "--key-file", keyFile(t, e.Key), "--agent", reference.MainAgent)
	if code != exitIncomplete || !strings.Contains(lines(t, out)["tcp-nodelay"], "NOT RUN tcp-nodelay") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestConformanceFails: an endpoint that leaves Nagle on fails its line,
// saying what was seen, and exits 1.
func TestConformanceFails(t *testing.T) {
	e, err := reference.Start(t.Context(), reference.Options{Faults: reference.Faults{Nagle: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	code, out, _ := runLnk(t, "conformance", "--endpoint", e.URL, "--key-file", keyFile(t, e.Key),
		"--agent", reference.MainAgent, "--pid", fmt.Sprint(os.Getpid()))
	if code != exitFailed {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	l := lines(t, out)["tcp-nodelay"]
	if !strings.HasPrefix(l, "FAIL tcp-nodelay — An endpoint that answers the proof sets TCP_NODELAY") || !strings.Contains(l, ": TCP_NODELAY is off") {
		t.Fatalf("%s", l)
	}
}

// TestConformanceWrongKey: a key file with another key fails the message
// checks, exit 1.
func TestConformanceWrongKey(t *testing.T) {
	e, err := reference.Start(t.Context(), reference.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	code, out, _ := runLnk(t, "conformance", "--endpoint", e.URL, "--key-file", keyFile(t, []byte("not-the-key")), "--agent", reference.MainAgent)
	if code != exitFailed || !strings.HasPrefix(lines(t, out)["message"], "FAIL message") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestConformanceHelp(t *testing.T) {
	code, out, _ := runLnk(t, "conformance", "--help")
	if code != 0 || !strings.Contains(out, "lnk conformance --endpoint URL --key-file FILE --agent NAME") || !strings.Contains(out, "-pid") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestConformanceUsage(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	good := keyFile(t, []byte("k3y"))
	for _, args := range [][]string{
		{"--bogus"},
		{},
		{"--endpoint", "http://127.0.0.1:1/acp", "--agent", "main"},
		{"--endpoint", "http://127.0.0.1:1/acp", "--key-file", good},
		{"--endpoint", "http://127.0.0.1:1/acp", "--key-file", filepath.Join(dir, "none"), "--agent", "main"},
		{"--endpoint", "http://127.0.0.1:1/acp", "--key-file", empty, "--agent", "main"},
		{"--endpoint", "ftp://127.0.0.1:1/acp", "--key-file", good, "--agent", "main"},
		{"--endpoint", "http://127.0.0.1:1/acp", "--key-file", good, "--agent", "Main Agent"},
		{"--endpoint", "http://127.0.0.1:1/acp", "--key-file", good, "--agent", "main", "--tool", "memory__search"},
		{"--endpoint", "http://127.0.0.1:1/acp", "--key-file", good, "--agent", "main", "extra"},
		{"--endpoint", "http://127.0.0.1:1/acp", "--key-file", good, "--agent", "main", "--timeout", "0s"},
		{"--pid", "x"},
		{"--reference", "--agent", "main"},
		{"--reference", "--tool", "memory__search"},
		{"--reference", "http://127.0.0.1:1/acp"},
	} {
		code, out, errOut := runLnk(t, append([]string{"conformance"}, args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "usage:") || !strings.HasPrefix(errOut, "lnk conformance: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
