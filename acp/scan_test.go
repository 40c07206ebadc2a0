package acp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzEachMember proves the scanner reads valid JSON as encoding/json
// does: an object's members, each key and value the same (the last of a
// key held twice), and an array's elements.
func FuzzEachMember(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[1,{"c":"}"}],"d":"x\"y","e":null}`, `{ "a" : { } , "a" : true }`, `[1, "a", {"b": [2]}, null]`, `{"\u0061":"\\"}`, `{}`, `[]`, `"s"`, `3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var want map[string]json.RawMessage
		wantObj := json.Unmarshal(b, &want) == nil && want != nil && bytes.TrimSpace(b)[0] == '{'
		got := map[string]json.RawMessage{}
		err := eachMember(b, func(k string, v []byte) error {
			got[k] = v
			return nil
		})
		if (err == nil) != wantObj {
			t.Fatalf("%s: object %v, scanner %v", b, wantObj, err)
		}
		if wantObj {
			if len(got) != len(want) {
				t.Fatalf("%s: %d members, want %d", b, len(got), len(want))
			}
			for k, v := range want {
				// encoding/json matches keys exactly here: no struct.
				if !bytes.Equal(bytes.TrimSpace(got[k]), bytes.TrimSpace(v)) {
					t.Fatalf("%s: member %q is %s, want %s", b, k, got[k], v)
				}
			}
		}
		var list []json.RawMessage
		wantList := json.Unmarshal(b, &list) == nil && list != nil
		var elems [][]byte
		isList, _ := eachElement(b, func(v []byte) error {
			elems = append(elems, v)
			return nil
		})
		if isList != wantList {
			t.Fatalf("%s: array %v, scanner %v", b, wantList, isList)
		}
		if wantList {
			if len(elems) != len(list) {
				t.Fatalf("%s: %d elements, want %d", b, len(elems), len(list))
			}
			for i := range list {
				if !bytes.Equal(bytes.TrimSpace(elems[i]), bytes.TrimSpace(list[i])) {
					t.Fatalf("%s: element %d is %s, want %s", b, i, elems[i], list[i])
				}
			}
		}
	})
}
