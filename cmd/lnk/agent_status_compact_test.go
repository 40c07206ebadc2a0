package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/lnk-dev/link/store"
)

// lnk agent status names a compact conversation past 10,000 events and
// what its turns cost, and says how to keep it another way; a shorter
// one, and a log of any length, it doesn't name.
func TestStatusLongCompact(t *testing.T) {
	home := t.TempDir()
	p, err := store.For(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	// write writes thread's n events as a log, or as compact keeps them:
	// a zstd frame of their lines in events.zst (the folder's sign).
	write := func(thread string, n int, compact bool) {
		dir, err := p.Conversation(thread)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		var b []byte
		for i := range n {
			kind := store.KindMessage
			if i%2 == 1 {
				kind = store.KindAnswer
			}
			line, err := store.MarshalLine(store.Event{Seq: int64(i + 1), Time: at.Add(time.Duration(i) * time.Second), Kind: kind, Text: "the weather today, and tomorrow " + strconv.Itoa(i)})
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, line...)
		}
		name := "events.jsonl"
		if compact {
			enc, err := zstd.NewWriter(nil)
			if err != nil {
				t.Fatal(err)
			}
			b, name = enc.EncodeAll(b, nil), "events.zst"
			enc.Close()
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("telegram:1", 10_001, true)
	write("telegram:2", 10_000, true)
	write("telegram:3", 20_000, false) // a log
	env := map[string]string{"LNK_HOME": home, "LNK_PORT": "1"}
	var out, errb safeBuffer
	if code := NewMain(&out, &errb, env).Run(t.Context(), []string{"agent", "status"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	for _, want := range []string{"telegram:1 is compact and 10001 events long", "about 30 ms on two cores", "lnk agent chat convert --to log"} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
	for _, not := range []string{"telegram:2", "telegram:3"} {
		if strings.Contains(text, not) {
			t.Errorf("status names %s:\n%s", not, text)
		}
	}
	out = safeBuffer{}
	if code := NewMain(&out, &errb, env).Run(t.Context(), []string{"agent", "status", "--json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var st agentStatus
	if err := json.Unmarshal([]byte(out.String()), &st); err != nil {
		t.Fatal(err)
	}
	if l := st.Storage.LongCompact; len(l) != 1 || l[0] != (longCompact{Thread: "telegram:1", Events: 10_001}) || st.Storage.ByKind["compact"] != 2 {
		t.Fatalf("storage %+v", st.Storage)
	}
}
