package fakeprovider

import (
	"bytes"
	"encoding/json"
)

// Prompt is a request's prompt as a provider's cache reads it, in the
// order it keys it: the tools, the system prompt, then each message, each
// as the request's own bytes, with the cache's breakpoints
// ("cache_control" marks, which say where an entry ends and are not part
// of what it keys) taken out. ok is false for a request that isn't a
// model's call in Anthropic's Messages or the Chat Completions format.
type Prompt struct {
	Tools    []byte
	System   []byte
	Messages [][]byte
}

// PromptOf reads r's prompt.
func PromptOf(r Request) (p Prompt, ok bool) {
	if r.API != "anthropic" && r.API != "chat" {
		return Prompt{}, false
	}
	var body struct {
		Tools    json.RawMessage   `json:"tools"`
		System   json.RawMessage   `json:"system"`
		Messages []json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(r.Body, &body) != nil {
		return Prompt{}, false
	}
	p.Tools, p.System = unmark(body.Tools), unmark(body.System)
	for _, m := range body.Messages {
		p.Messages = append(p.Messages, unmark(m))
	}
	if r.API == "chat" && len(p.Messages) > 0 && bytes.Contains(p.Messages[0], []byte(`"role":"system"`)) {
		p.System, p.Messages = p.Messages[0], p.Messages[1:]
	}
	return p, true
}

// marks are the cache breakpoints as the SDKs write them.
var marks = [][]byte{
	[]byte(`,"cache_control":{"type":"ephemeral"}`),
	[]byte(`"cache_control":{"type":"ephemeral"},`),
}

func unmark(b []byte) []byte {
	for _, m := range marks {
		b = bytes.ReplaceAll(b, m, nil)
	}
	return b
}

// bytes is the prompt as one run of bytes, in the cache's order.
func (p Prompt) bytes() []byte {
	out := append(append([]byte(nil), p.Tools...), p.System...)
	for _, m := range p.Messages {
		out = append(out, m...)
	}
	return out
}

// CachedPrefix is, over a run of requests of one conversation in order,
// how many of their prompts' bytes (Prompt, in the cache's order) are a
// byte-identical prefix of the request before, and how many there are in
// all; the first request's are all counted as new. prefix/total is the
// share a provider's cache could have kept.
func CachedPrefix(reqs []Request) (prefix, total int) {
	var prev []byte
	for _, r := range reqs {
		p, ok := PromptOf(r)
		if !ok {
			continue
		}
		b := p.bytes()
		n := 0
		for n < len(b) && n < len(prev) && b[n] == prev[n] {
			n++
		}
		prefix += n
		total += len(b)
		prev = b
	}
	return prefix, total
}
