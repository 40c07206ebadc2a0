package store

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseLine(t *testing.T) {
	e := Event{Seq: 7, Time: time.Date(2026, 11, 30, 6, 0, 0, 5, time.UTC), Kind: KindMessage, Text: "hi\nthere"}
	line, err := MarshalLine(e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseLine(line)
	if err != nil || got.Seq != 7 || got.Text != e.Text || !got.Time.Equal(e.Time) {
		t.Fatalf("ParseLine(MarshalLine(e)) = %+v, %v", got, err)
	}
	for _, bad := range []string{
		``, `{}`, `[]`, `null`, `{"seq":0,"kind":"message"}`, `{"seq":1}`, `{"seq":"1","kind":"message"}`,
		`{"seq":1,"kind":"message"} {"seq":2,"kind":"message"}`, `{"seq":1,"kind":"message"}x`, `{"seq":1,"kind":"message"`,
	} {
		if _, err := ParseLine([]byte(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ParseLine(%s) = %v, want ErrCorrupt", bad, err)
		}
	}
}

// A large message's line is json.Marshal's, its text and attachments
// copied once into a line of exactly its length, and e left as it was.
func TestMarshalLineLarge(t *testing.T) {
	big := strings.Repeat("words <&> \"quoted\"\n", 1<<12)
	data := strings.Repeat("QUJD", 1<<14)
	e := Event{Seq: 3, Time: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC), Kind: KindMessage, Header: "[h]", Text: big,
		Parts: []Part{{Type: "image", MimeType: "image/png", Data: data}, {Type: "resource", Name: "a.txt", Text: big}, {Type: "image", MimeType: "image/gif", Data: "R0lG"}}}
	line, err := MarshalLine(e)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(e)
	if string(line) != string(want)+"\n" {
		t.Fatalf("the line differs from json.Marshal's")
	}
	if len(line) != cap(line) {
		t.Fatalf("a line of %d bytes in %d", len(line), cap(line))
	}
	if e.Text != big || e.Parts[0].Data != data || e.Parts[1].Text != big {
		t.Fatal("MarshalLine changed the event it was given")
	}
	got, err := ParseLine(line)
	if err != nil || got.Text != big || got.Parts[0].Data != data {
		t.Fatalf("ParseLine: %v", err)
	}
}
