package store

import (
	"errors"
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
