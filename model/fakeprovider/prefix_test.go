package fakeprovider

import "testing"

// CachedPrefix counts, of each request, the bytes its prompt shares with
// the one before from the start, in the cache's order (tools, system,
// messages), breakpoints aside.
func TestCachedPrefix(t *testing.T) {
	a := Request{API: "anthropic", Body: []byte(`{"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"one","cache_control":{"type":"ephemeral"}}]}]}`)}
	b := Request{API: "anthropic", Body: []byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"one"}]},{"role":"assistant","content":"two"}],"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}]}`)}
	c := Request{API: "chat", Body: []byte(`{"messages":[{"role":"system","content":"S"},{"role":"user","content":"x"}]}`)}
	pa, _ := PromptOf(a)
	pb, _ := PromptOf(b)
	la, lb := len(pa.bytes()), len(pb.bytes())
	if string(pb.Messages[0]) != string(pa.Messages[0]) {
		t.Fatalf("the breakpoint isn't taken out: %s vs %s", pa.Messages[0], pb.Messages[0])
	}
	prefix, total := CachedPrefix([]Request{a, b, {API: ""}})
	if total != la+lb || prefix != la {
		t.Fatalf("prefix %d of %d, want %d of %d", prefix, total, la, la+lb)
	}
	pc, ok := PromptOf(c)
	if !ok || string(pc.System) != `{"role":"system","content":"S"}` || len(pc.Messages) != 1 {
		t.Fatalf("chat prompt %+v", pc)
	}
	if _, ok := PromptOf(Request{API: "gemini"}); ok {
		t.Fatal("a Gemini request read")
	}
}
