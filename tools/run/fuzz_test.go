package run

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseSettings: config.json's "run" table, as an owner may write
// it. One taken is within every bound (check passes again, the limits
// set); one refused says so naming "run", with Defaults.
func FuzzParseSettings(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"run": null}`, `{"run": {}}`,
		`{"run": {"timeout": 30, "max_timeout": 600, "network": true, "sandbox": "off", "env": {"A": "b"}, "read": ["/opt/x"], "output": 4096, "limits": {"processes": 8}}}`,
		`{"run": {"timeout": 0}}`, `{"run": {"shell": "bash"}}`, `{"run": {"env": {"A=B": "c"}}}`, `{"run": {"read": ["rel"]}}`,
		`{"run": {"limits": {"memory": -1}}}`, `{"run": []}`, `{"run": {"timeout": 1e99}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSettings(b)
		if err != nil {
			if !strings.Contains(err.Error(), "config.json") {
				t.Fatalf("a refusal naming no file: %v", err)
			}
			return
		}
		if err := s.check(); err != nil {
			t.Fatalf("taken but breaks %v: %+v", err, s)
		}
		if s.Limits.Processes <= 0 || s.Limits.Memory <= 0 || s.Limits.CPUSeconds <= 0 || s.Limits.FileSize <= 0 || s.Limits.OpenFiles <= 0 {
			t.Fatalf("a limit unset: %+v", s.Limits)
		}
	})
}

// FuzzCapped: whatever a command writes, in whatever pieces, what is
// answered is at most its cap and a line saying the cut, the cut counted
// exactly, head and tail as written; output that fits is answered whole.
func FuzzCapped(f *testing.F) {
	f.Add([]byte("hello\n"), uint16(1024), uint8(3))
	f.Add(bytes.Repeat([]byte("y\n"), 5000), uint16(1024), uint8(7))
	f.Add(bytes.Repeat([]byte("é"), 3000), uint16(1025), uint8(1))
	f.Fuzz(func(t *testing.T, out []byte, max uint16, piece uint8) {
		m := int(max)%4096 + 2
		c := newCapped(m)
		step := int(piece) + 1
		for i := 0; i < len(out); i += step {
			c.Write(out[i:min(i+step, len(out))])
		}
		text, cut := c.text()
		if len(out) <= m {
			if text != string(out) || cut != 0 {
				t.Fatalf("fits but answered %q (cut %d)", text, cut)
			}
			return
		}
		if cut <= 0 || len(text) > m+200 || !strings.Contains(text, "bytes cut (of ") {
			t.Fatalf("%d bytes over a cap of %d answered %d bytes, cut %d", len(out), m, len(text), cut)
		}
		head, _, _ := strings.Cut(text, "[... ")
		if !strings.HasPrefix(string(out), strings.TrimSuffix(head, "\n")) {
			t.Fatal("the head isn't what was written first")
		}
		if utf8.Valid(out) && !utf8.ValidString(text) {
			t.Fatal("a character cut in two")
		}
	})
}
