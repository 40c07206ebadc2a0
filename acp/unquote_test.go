package acp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"
)

// FuzzDecodeBlockInPlace: a block read in place (every string taken
// aside, however short) is the block json.Unmarshal reads, or both
// refuse it.
func FuzzDecodeBlockInPlace(f *testing.F) {
	for _, s := range []string{
		`{"type":"text","text":"hello"}`,
		`{"type":"text","text":"a\nb\"c\\d\/e\u00e9\ud83d\ude00\ud800x\u0041"}`,
		`{"type":"text","text":"first","TEXT":"second"}`,
		`{"type":"text","Text":"first","text":"second"}`,
		`{"type":"image","mimeType":"image/png","data":"aGVsbG8="}`,
		`{"type":"resource","resource":{"uri":"file:///a","text":"x\ty","blob":"YQ=="}}`,
		`{"type":"resource","resource":{"uri":"file:///a","text":"x"},"resource":null}`,
		`{"type":"resource","resource":{"text":"one"},"resource":{"uri":"u","text":"two"}}`,
		"{\"type\":\"text\",\"text\":\"\xff\xfe\"}",
		`{"type":"text","text":5}`,
	} {
		f.Add([]byte(s))
	}
	was := largeString
	largeString = 0
	defer func() { largeString = was }()
	f.Fuzz(func(t *testing.T, item []byte) {
		if !json.Valid(item) || len(bytes.TrimSpace(item)) == 0 || bytes.TrimSpace(item)[0] != '{' {
			return
		}
		var want Block
		wantErr := json.Unmarshal(item, &want)
		got, err := decodeBlock(bytes.Clone(item), readInPlace)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s: in place %v, json.Unmarshal %v", item, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\nin place       %+v %+v\njson.Unmarshal %+v %+v", item, got, got.Resource, want, want.Resource)
		}
	})
}

// TestDecodeBlocksInPlace: a large text read in place is the message's
// own memory, its escapes undone there; DecodeBlocks copies.
func TestDecodeBlocksInPlace(t *testing.T) {
	text := bytes.Repeat([]byte("line\\n\\\"q\\\" "), largeString/8)
	raw := []byte(`[{"type":"text","text":"` + string(text) + `"}]`)
	want, err := DecodeBlocks(raw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeBlocks(raw, readInPlace)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Text != want[0].Text {
		t.Fatal("read in place, the text differs from json.Unmarshal's")
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	inside := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return p >= start && p < start+uintptr(len(raw))
	}
	if !inside(got[0].Text) {
		t.Fatal("the text read in place is a copy")
	}
	if inside(want[0].Text) {
		t.Fatal("DecodeBlocks's text is the message's memory")
	}
}

// FuzzCheckBlocks: CheckBlocks refuses a prompt exactly as DecodeBlocks
// does, with the same rule, whatever its bytes, and leaves them as they
// were.
func FuzzCheckBlocks(f *testing.F) {
	for _, s := range []string{
		`[{"type":"text","text":"a\nb \"q\""}]`,
		`[{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}]`,
		`[{"type":"image","mimeType":"image/png","data":"iVBO\/w0KGgo="}]`,
		`[{"type":"image","mimeType":"image/png","data":"not base64!"}]`,
		`[{"type":"resource","resource":{"uri":"file:///a","blob":"QUJD"}}]`,
		`[{"type":"resource","resource":{"uri":"file:///a","blob":"QU\u004aD"}}]`,
		`[{"type":"resource","resource":null}]`,
		`[{"type":"text","TEXT":"x","text":"y"}]`,
		`[]`, `{}`, `null`,
	} {
		f.Add([]byte(s))
	}
	was := largeString
	largeString = 0
	defer func() { largeString = was }()
	f.Fuzz(func(t *testing.T, raw []byte) {
		before := bytes.Clone(raw)
		_, want := DecodeBlocks(bytes.Clone(raw))
		got := CheckBlocks(raw)
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("%s: CheckBlocks %v, DecodeBlocks %v", raw, got, want)
		}
		if !bytes.Equal(raw, before) {
			t.Fatalf("%s: CheckBlocks changed it to %s", before, raw)
		}
	})
}
