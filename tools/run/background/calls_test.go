package background

import (
	"strings"
	"testing"
	"time"
)

// run__read's bounds: a limit past 64 KiB, below 1 or an offset below 0
// is refused naming the rule; none says 16 KiB.
func TestReadInCheck(t *testing.T) {
	for _, tc := range []struct {
		in   ReadIn
		want string // in the refusal; "" for none
	}{
		{ReadIn{ID: "x"}, ""},
		{ReadIn{ID: "x", Limit: MaxRead}, ""},
		{ReadIn{ID: "x", Limit: MaxRead + 1}, "limit is 1 to 65536 bytes"},
		{ReadIn{ID: "x", Limit: -1}, "limit is 1 to 65536 bytes"},
		{ReadIn{ID: "x", Offset: -1}, "offset is a byte of the output, 0 or more"},
	} {
		in := tc.in
		err := in.Check()
		if tc.want == "" {
			if err != nil || in.Limit == 0 {
				t.Errorf("%+v: %v, limit %d", tc.in, err, in.Limit)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.in, err, tc.want)
		}
	}
}

// run__list says each command's state from the asking conversation's
// view, its command on one line; run__read says where its text lies and
// what was dropped.
func TestAnswers(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	all := []Info{
		{ID: "aaaa2222", Thread: "link:chat", Command: "make\ntest", Started: now.Add(-90 * time.Second), Status: Running, Output: 12},
		{ID: "bbbb2222", Thread: "telegram:42", Command: "ls", Started: now.Add(-time.Hour), Status: Ended, End: End{Exit: 2, Ended: now.Add(-time.Minute)}},
		{ID: "cccc2222", Thread: "link:chat", Command: "x", Status: Lost},
	}
	got := ListText(all, "link:chat", now)
	for _, want := range []string{
		"3 background commands, 1 running",
		"- aaaa2222 running for 1m30s, 12 bytes of output: make test\n",
		"- bbbb2222 ended 1m0s ago, exit status 2 (started in another conversation), 0 bytes of output: ls\n",
		"- cccc2222 lost",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("list lacks %q:\n%s", want, got)
		}
	}
	read := ReadText(Output{Text: "hello", From: 10, Next: 15, Total: 20, Dropped: 10}, all[0], now)
	if want := "run:aaaa2222, running for 1m30s: bytes 10 to 15 of 20 (the 10 before 10 are no longer kept: only the latest output is); read on from offset 15:\nhello"; read != want {
		t.Errorf("read answered\n%s\nwant\n%s", read, want)
	}
}

// Words quoted back are cut at a character's start, never inside one.
func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"héllo", 10, "héllo"},
		{"héllo", 2, "h..."},
		{"héllo", 3, "hé..."},
		{"日本語", 4, "日..."},
	} {
		if got := clip(tc.s, tc.n); got != tc.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
