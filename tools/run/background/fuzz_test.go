package background

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lnk-dev/link/internal/testwait"
)

// kept writes a command's folder as a supervisor leaves it, ended, its
// output in segments of 7 bytes each, the first dropped.
func kept(t testing.TB, dir, id, output string) {
	t.Helper()
	d := filepath.Join(dir, id)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := writeJSON(filepath.Join(d, jobFile), Job{ID: id, Thread: "link:test", Command: "x", Started: now}); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(d, endFile), End{Output: int64(len(output)), Ended: now}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, lockFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w := &outputWriter{dir: d, keep: 28}
	if _, err := w.Write([]byte(output)); err != nil {
		t.Fatal(err)
	}
	w.Close()
}

// FuzzRead: run__read's id, offset and limit, as the model writes them.
// Whatever they are, a read answers at most limit bytes of valid UTF-8
// from the output kept, or refuses naming the rule; an id never names a
// path.
func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	const output = "héllo wörld, ça va? 日本語のテキスト and more text here"
	kept(f, dir, "abcd2345", output)
	m := &Manager{opts: Options{Dir: dir}}
	f.Add("abcd2345", int64(0), 16)
	f.Add("abcd2345", int64(3), 1)
	f.Add("../abcd2345", int64(0), 10)
	f.Add("abcd2345", int64(len(output)), 100)
	f.Add("ABCD2345", int64(-1), 0)
	f.Fuzz(func(t *testing.T, id string, offset int64, limit int) {
		in := ReadIn{ID: id, Offset: offset, Limit: limit}
		if err := in.Check(); err != nil {
			return
		}
		out, info, err := m.Read(in.ID, in.Offset, in.Limit)
		if err != nil {
			if !errors.Is(err, ErrNoSuch) && !errors.Is(err, ErrOffset) {
				t.Fatalf("read %q at %d: %v, not a refusal naming a rule", id, offset, err)
			}
			return
		}
		if id != "abcd2345" {
			t.Fatalf("read %q answered %+v", id, info)
		}
		if !utf8.ValidString(out.Text) {
			t.Fatalf("read %d at %d: %q is not UTF-8", limit, offset, out.Text)
		}
		if n := out.Next - out.From; n < 0 || n > int64(in.Limit) {
			t.Fatalf("read %d at %d: %d bytes", in.Limit, offset, n)
		}
		if !strings.ContainsRune(out.Text, utf8.RuneError) && !strings.Contains(output, out.Text) {
			t.Fatalf("read %q, not the output's", out.Text)
		}
		if out.From < out.Dropped || out.Total != int64(len(output)) {
			t.Fatalf("read at %d: from %d, dropped %d, total %d", offset, out.From, out.Dropped, out.Total)
		}
	})
}

// A command folder whose job.json or end.json doesn't read costs that
// command alone: the list says it, the other commands listed and told,
// and one whose end doesn't read told lost, saying why.
func TestCorruptState(t *testing.T) {
	dir := t.TempDir()
	kept(t, dir, "good2345", "fine")
	kept(t, dir, "badjob23", "x")
	kept(t, dir, "badend23", "y")
	os.WriteFile(filepath.Join(dir, "badjob23", jobFile), []byte("{not json"), 0o600)
	os.WriteFile(filepath.Join(dir, "badend23", endFile), []byte("\x00\x01"), 0o600)
	r := newRecorder()
	m := open(t, dir, r, Options{})
	all, err := m.List()
	if err != nil || len(all) != 3 {
		t.Fatalf("list: %+v, %v; want the three", all, err)
	}
	got := map[string]string{}
	for range 2 {
		msg := r.next(t)
		got[msg.ID] = msg.Text
	}
	m.sweep(context.Background())
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.msgs) != 2 || !strings.Contains(got["good2345"], "fine") || !strings.Contains(got["badend23"], "how it ended doesn't read") {
		t.Fatalf("told %v", got)
	}
}

// FuzzState: a command's job.json and end.json as found on disk, written
// by anything. Whatever they hold, a list says the command (or leaves
// out one with no job), and its end's text is bounded: nothing panics.
func FuzzState(f *testing.F) {
	f.Add([]byte(`{"id":"abcd2345","thread":"link:test","command":"x"}`), []byte(`{"exit":3,"output":1}`))
	f.Add([]byte(`{"command":`), []byte(`{"exit":-1,"signal":"killed","stopped":true}`))
	f.Add([]byte(`null`), []byte(`[]`))
	f.Fuzz(func(t *testing.T, job, end []byte) {
		dir := t.TempDir()
		kept(t, dir, "abcd2345", "out")
		d := filepath.Join(dir, "abcd2345")
		os.WriteFile(filepath.Join(d, jobFile), job, 0o600)
		os.WriteFile(filepath.Join(d, endFile), end, 0o600)
		m := &Manager{opts: Options{Dir: dir}}
		all, err := m.List()
		if err != nil || len(all) > 1 {
			t.Fatalf("list: %+v, %v", all, err)
		}
		var j Job
		var e End
		if readJSON(filepath.Join(d, jobFile), &j) == nil && readJSON(filepath.Join(d, endFile), &e) == nil {
			if text := endText(j, e, Ended, d); len(text) > 4<<10 {
				t.Fatalf("an end's text of %d bytes", len(text))
			}
		}
	})
}

// Past KeepEnded, the oldest ended commands are removed at a sweep once
// told (the oldest here only after its end is), the latest kept.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	ids := []string{"aaaa2222", "bbbb2222", "cccc2222", "dddd2222", "eeee2222"}
	for i, id := range ids {
		kept(t, dir, id, "x")
		var j Job
		readJSON(filepath.Join(dir, id, jobFile), &j)
		j.Started = time.Date(2026, 12, 1, i, 0, 0, 0, time.UTC)
		writeJSON(filepath.Join(dir, id, jobFile), j)
		if id != "aaaa2222" { // the oldest is not yet told
			os.WriteFile(filepath.Join(dir, id, toldFile), nil, 0o600)
		}
	}
	r := newRecorder()
	m := open(t, dir, r, Options{KeepEnded: 2})
	r.next(t) // aaaa2222's end told
	left := func() string {
		var names []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return strings.Join(names, " ")
	}
	testwait.For(t, 10*time.Second, "the two latest kept alone", func() bool { m.sweep(context.Background()); return left() == "dddd2222 eeee2222" })
}
