package jsonx

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// AppendString writes what encoding/json writes, and StringLen is its
// length, for any bytes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" back \\ slash", "<a href='x'>&amp;</a>", "\x00\x01\b\f\n\r\t\x1f\x7f", "é中文🙂", "\xff\xfe bad \xc3", "\u2028\u2029", "\u202e\u200b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := AppendString([]byte("x"), s)
		if !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("AppendString(%q) = %s, json.Marshal %s", s, got[1:], want)
		}
		if n := StringLen(s); n != len(want) {
			t.Fatalf("StringLen(%q) = %d, want %d", s, n, len(want))
		}
	})
}

// Fit is the longest prefix of s at a rune's start whose JSON string
// takes at most n bytes, for any bytes and bound.
func FuzzFit(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" back \\ slash", "\x00\x01\n", "é中文🙂", "\xff\xfe bad \xc3"} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := Fit(s, n)
		if !strings.HasPrefix(s, got) || (utf8.ValidString(s) && len(got) < len(s) && !utf8.RuneStart(s[len(got)])) {
			t.Fatalf("Fit(%q, %d) = %q: not a prefix ending at a rune's start", s, n, got)
		}
		if got != "" && StringLen(got) > n {
			t.Fatalf("Fit(%q, %d) = %q takes %d", s, n, got, StringLen(got))
		}
		if len(got) < len(s) {
			_, size := utf8.DecodeRuneInString(s[len(got):])
			if next := s[:len(got)+size]; utf8.RuneStart(s[len(got)]) && (len(next) == len(s) || utf8.RuneStart(s[len(next)])) && StringLen(next) <= n {
				t.Fatalf("Fit(%q, %d) = %q, but %q fits too", s, n, got, next)
			}
		}
	})
}

type doc struct {
	Name  string   `json:"name"`
	Text  string   `json:"text,omitempty"`
	Parts []string `json:"parts"`
}

// Fill makes the JSON json.Marshal makes of the value with its strings
// in place, in one slice of exactly its length.
func TestFill(t *testing.T) {
	big := strings.Repeat("<a \"b\"\n é \xff>", MinHole/8)
	other := strings.Repeat("z", MinHole)
	d := doc{Name: "short", Text: big, Parts: []string{other, "small", big}}
	want, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var h Holes
	held := doc{Name: h.Hold(d.Name), Text: h.Hold(d.Text), Parts: []string{h.Hold(other), h.Hold("small"), h.Hold(big)}}
	if h.Held() != 3 || held.Name != "short" || held.Parts[1] != "small" {
		t.Fatalf("held %d; kept as is: %q %q", h.Held(), held.Name, held.Parts[1])
	}
	small, err := json.Marshal(held)
	if err != nil {
		t.Fatal(err)
	}
	if len(small) > 300 {
		t.Fatalf("marshaled with placeholders: %d bytes", len(small))
	}
	got := h.Fill(small, "\n")
	if !bytes.Equal(got, append(want, '\n')) {
		t.Fatalf("filled JSON differs from json.Marshal's")
	}
	if len(got) != cap(got) {
		t.Fatalf("filled into %d bytes of room for %d", cap(got), len(got))
	}
}

// A placeholder's prefix in a string the value holds that isn't one of
// h's is left as it is.
func TestFillNotAHole(t *testing.T) {
	var h Holes
	p := h.Hold(strings.Repeat("y", MinHole))
	prefix := strings.TrimSuffix(p, "0")
	d := []string{p, prefix + "7", prefix + "x", prefix}
	small, _ := json.Marshal(d)
	got := h.Fill(small, "")
	want, _ := json.Marshal([]string{strings.Repeat("y", MinHole), prefix + "7", prefix + "x", prefix})
	if !bytes.Equal(got, want) {
		t.Fatalf("got %.200s", got)
	}
}

func TestFillNothingHeld(t *testing.T) {
	var h Holes
	if got := h.Fill([]byte(`{"a":1}`), "\n"); string(got) != "{\"a\":1}\n" {
		t.Fatalf("got %q", got)
	}
}

// Body reads as Fill's JSON, of the size it says, read again from its
// start at each open, whatever the chunk and the reads' sizes, a
// character never split between chunks.
func FuzzBody(f *testing.F) {
	f.Add("é中文🙂 <&> \"q\"\n\xff\xc3", uint8(3), uint8(7))
	f.Add("plain", uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, s string, chunkSize, readSize uint8) {
		defer func(c int) { chunk = c }(chunk)
		chunk = int(chunkSize)%64 + 1
		big := strings.Repeat(s, MinHole/max(1, len(s))+1)
		var h Holes
		small, _ := json.Marshal(doc{Name: "n", Text: h.Hold(big), Parts: []string{"a", h.Hold(big + "!")}})
		want, _ := json.Marshal(doc{Name: "n", Text: big, Parts: []string{"a", big + "!"}})
		size, open := h.Body(small)
		if size != int64(len(want)) {
			t.Fatalf("size %d, want %d", size, len(want))
		}
		for range 2 {
			var got bytes.Buffer
			r := open()
			p := make([]byte, int(readSize)+1)
			for {
				n, err := r.Read(p)
				got.Write(p[:n])
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("the body differs from json.Marshal's")
			}
		}
	})
}
