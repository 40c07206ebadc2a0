package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// jsonDecoder decodes a body keeping numbers exact.
func jsonDecoder(body []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	return dec
}

// unmarshal decodes a request's body into v, which must be all of it.
func unmarshal(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return fmt.Errorf("request body is empty: a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("request body is not valid JSON for this endpoint: %v", err)
	}
	if dec.More() {
		return fmt.Errorf("request body has data after its JSON object")
	}
	return nil
}

// contentText is the text of a content field that is a string or an array
// of blocks, joining the text of the blocks whose type is one of
// textTypes. A block must be an object with a string type.
func contentText(where string, raw json.RawMessage, textTypes ...string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		return "", fmt.Errorf("%s: must be a string or an array of content blocks", where)
	}
	var texts []string
	for i, b := range blocks {
		var typ string
		if b == nil || json.Unmarshal(b["type"], &typ) != nil {
			return "", fmt.Errorf("%s.%d.type: a content block needs a type", where, i)
		}
		if !slices.Contains(textTypes, typ) {
			continue
		}
		var t string
		if json.Unmarshal(b["text"], &t) != nil {
			return "", fmt.Errorf("%s.%d.text: must be a string", where, i)
		}
		texts = append(texts, t)
	}
	return strings.Join(texts, "\n"), nil
}

// joinNonEmpty joins the non-empty strings with newlines.
func joinNonEmpty(ss ...string) string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}
