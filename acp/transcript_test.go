package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the answers (<) of testdata/*.jsonrpc from what Serve says")

// TestTranscripts plays each golden JSON-RPC transcript in testdata
// against Serve over a real WebSocket: "> " lines are sent as they are,
// and each "< " line is the next message Serve must send, compared as
// JSON values. Each transcript ends with a request whose answer is the
// last line, so nothing unexpected comes unread.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jsonrpc")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			playTranscript(t, file, newScripted())
		})
	}
}

// playTranscript plays file against Serve driving a.
func playTranscript(t *testing.T, file string, a Agent) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tools := []string{"memory__search"}
	url, _ := wsServer(t, a, &tools, 0)
	f := dialWS(t, url)
	ctx := testCtx(t)
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "> "):
			if err := f.WriteMessage(ctx, []byte(line[2:])); err != nil {
				t.Fatalf("%s:%d: send: %v", file, n, err)
			}
		case strings.HasPrefix(line, "< "):
			got, err := f.ReadMessage(ctx)
			if err != nil {
				t.Fatalf("%s:%d: read: %v", file, n, err)
			}
			if *update {
				out.WriteString("< " + string(got) + "\n")
				continue
			}
			if !sameJSON(t, got, []byte(line[2:])) {
				t.Errorf("%s:%d:\n got %s\nwant %s", file, n, got, line[2:])
			}
			continue
		}
		if *update {
			out.WriteString(line + "\n")
		}
	}
	if *update {
		if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %s", a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("transcript line not JSON: %s", b)
	}
	return reflect.DeepEqual(x, y)
}
