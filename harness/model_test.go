package harness_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// The harness never streams more than a bridge reads: an answer past the
// limit is ended there, saying why, and the turn ends.
func TestAnswerCap(t *testing.T) {
	const limit = 4096
	r := newRig(t, func(c *harness.Config) { c.MaxAnswer = limit })
	long := strings.Repeat("word \"quoted\" ", 3000)
	r.Model.Push(model.Response{Text: long})
	res, x, err := r.Say("telegram:8", "say a lot", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != acp.StopMaxTokens {
		t.Fatalf("stop %q", res.StopReason)
	}
	wire := 0
	for _, n := range x.Notes() {
		b, _ := json.Marshal(n)
		wire += len(b)
	}
	got := x.Text()
	if wire > limit || !strings.HasSuffix(got, harness.CutNote) || !strings.HasPrefix(long, strings.TrimSuffix(got, harness.CutNote)) || len(got) < limit/4 {
		t.Fatalf("streamed %d bytes on the wire, %d of text: %.80q...", wire, len(got), got)
	}
	ev := r.Events("telegram:8")
	last := ev[len(ev)-1]
	if !store.FinalAnswer(last) || !strings.HasSuffix(last.Text, harness.CutNote) {
		t.Fatalf("answer event %+v", last)
	}
}

// A conversation's model comes from _meta.link's model, a name or an
// alias, kept as a model_set event from the message's sender; the next
// turn runs on it. A model no provider serves is refused before anything
// is stored.
func TestModelSet(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "on claude"}, model.Response{Text: "still"}, model.Response{Text: "gpt"})
	if _, _, err := r.Say("telegram:3", "use the fast one", json.RawMessage(`{"link":{"model":"fast","from":"agent:boss"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Say("telegram:3", "and now?", nil); err != nil {
		t.Fatal(err)
	}
	reqs := r.Requests("telegram:3")
	if len(reqs) != 2 || reqs[0].Model != "anthropic/claude-test" || reqs[1].Model != "anthropic/claude-test" {
		t.Fatalf("models %q", []string{reqs[0].Model, reqs[1].Model})
	}
	ev := r.Events("telegram:3")
	if ev[0].Kind != store.KindModelSet || ev[0].Model != "anthropic/claude-test" || ev[0].From != "agent:boss" {
		t.Fatalf("first event %+v", ev[0])
	}
	if ev[2].Model != "anthropic/claude-test" {
		t.Fatalf("answer made by %q", ev[2].Model)
	}
	if _, _, err := r.Say("telegram:3", "x", json.RawMessage(`{"link":{"model":"openai/gpt-test"}}`)); err != nil {
		t.Fatal(err)
	}
	if m := r.Requests("telegram:3")[2].Model; m != "openai/gpt-test" {
		t.Fatalf("a name: %q", m)
	}
	n := len(r.Events("telegram:3"))
	_, _, err := r.Say("telegram:3", "y", json.RawMessage(`{"link":{"model":"nope/model"}}`))
	var rpc *acp.Error
	if !errors.As(err, &rpc) || rpc.Code != acp.CodeInvalidParams || !strings.Contains(rpc.Message, "model") {
		t.Fatalf("an unknown model: %v", err)
	}
	if len(r.Events("telegram:3")) != n {
		t.Fatal("a refused message was stored")
	}
	// Refused for its model, a message narrows no tools either.
	before := r.offered("telegram:3")
	if len(before) < 2 {
		t.Fatalf("offered %q, want two tools or more to narrow", before)
	}
	_, _, err = r.Say("telegram:3", "z", json.RawMessage(`{"link":{"model":"nope/model","tools":["`+before[0]+`"]}}`))
	if !errors.As(err, &rpc) || rpc.Code != acp.CodeInvalidParams {
		t.Fatalf("an unknown model with tools: %v", err)
	}
	if _, _, err := r.Say("telegram:3", "w", nil); err != nil {
		t.Fatal(err)
	}
	if after := r.offered("telegram:3"); !slices.Equal(after, before) {
		t.Fatalf("offered %q after a message refused for its model, want %q as before", after, before)
	}
}

// Images, voice notes and documents reach a model that takes them; for
// one that doesn't, the text says what was sent.
func TestAttachments(t *testing.T) {
	r := newRig(t)
	img := acp.Block{Type: "image", MimeType: "image/png", Data: "iVBORw0KGgo="}
	voice := acp.Block{Type: "audio", MimeType: "audio/ogg", Data: "T2dnUw=="}
	doc := acp.Block{Type: "resource", Resource: &acp.Resource{URI: "file:///a.pdf", MimeType: "application/pdf", Blob: "JVBERi0="}}
	note := acp.Block{Type: "resource", Resource: &acp.Resource{URI: "file:///n.txt", MimeType: "text/plain", Text: "the note"}}
	r.Model.Push(model.Response{Text: "seen"}, model.Response{Text: "told"})
	// Anthropic's models take images and documents, not audio.
	if _, _, err := r.Say("telegram:11", "look", json.RawMessage(`{"link":{"model":"anthropic/claude-test"}}`), img, voice, doc, note); err != nil {
		t.Fatal(err)
	}
	want := []model.Part{
		model.Text(senderHeader), model.Text("look"), model.Image("image/png", img.Data),
		model.Text("[An audio file (audio/ogg, 6 bytes) was sent here. This model doesn't take audio files, so it wasn't passed on.]"),
		{Kind: model.KindDocument, MimeType: "application/pdf", Data: doc.Resource.Blob, Name: "file:///a.pdf"},
		{Kind: model.KindDocument, MimeType: "text/plain", Text: "the note", Name: "file:///n.txt"},
	}
	if diff := cmp.Diff(want, headerAt(t, r.Requests("telegram:11")[0].Messages[0].Parts, 0)); diff != "" {
		t.Fatalf("parts (-want +got):\n%s", diff)
	}
	msg := r.Events("telegram:11")[1]
	if len(msg.Parts) != 4 || msg.Parts[0].Type != "image" || msg.Parts[2].Name != "file:///a.pdf" {
		t.Fatalf("message kept %+v", msg.Parts)
	}
	// The offline model takes none: each is told in text.
	if _, _, err := r.Say("telegram:12", "look", nil, img, doc); err != nil {
		t.Fatal(err)
	}
	want = []model.Part{model.Text(senderHeader), model.Text("look"),
		model.Text("[An image (image/png, 9 bytes) was sent here. This model doesn't take images, so it wasn't passed on.]"),
		model.Text(`[A document (application/pdf, 6 bytes) named "file:///a.pdf" was sent here. This model doesn't take documents, so it wasn't passed on.]`),
	}
	if diff := cmp.Diff(want, headerAt(t, r.Requests("telegram:12")[0].Messages[0].Parts, 0)); diff != "" {
		t.Fatalf("parts (-want +got):\n%s", diff)
	}
}

// Settings are read at each turn: a model changed between turns is the
// next turn's, and the tools narrowed by a connection's Link-Tools are
// kept with the conversation.
func TestSettingsEachTurn(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "a"}, model.Response{Text: "b"})
	if _, _, err := r.Say("telegram:13", "one", nil); err != nil {
		t.Fatal(err)
	}
	r.SetSettings(func(s *harness.Settings) { s.Model = "fast" })
	if _, _, err := r.Say("telegram:13", "two", nil); err != nil {
		t.Fatal(err)
	}
	reqs := r.Requests("telegram:13")
	if reqs[0].Model != "offline" || reqs[1].Model != "anthropic/claude-test" {
		t.Fatalf("models %q, %q", reqs[0].Model, reqs[1].Model)
	}
}

// A model that fails is answered in words, stored as the turn's answer so
// the message isn't taken for one a crash left.
func TestModelFails(t *testing.T) {
	r := newRig(t)
	r.Model.Fail(model.ClassifyError(400, `{"error":{"message":"prompt is too long: 300000 tokens"}}`))
	res, x, err := r.Say("telegram:14", "hello", nil)
	if err != nil || res.StopReason != acp.StopEndTurn {
		t.Fatalf("%+v, %v", res, err)
	}
	if !strings.Contains(x.Text(), "prompt is too long") {
		t.Fatalf("streamed %q", x.Text())
	}
	if ev := r.Events("telegram:14"); harness.Waiting(ev) {
		t.Fatal("the message is left waiting")
	}
}

// senderHeader stands for the header before a message's text, which
// names its time: headerAt puts it in place of one.
const senderHeader = "[the sender's header]"

// headerAt copies parts with the one at i, a sender's header
// ("[time, connection, sender]"), made senderHeader, for cmp.Diff.
func headerAt(t *testing.T, parts []model.Part, i int) []model.Part {
	t.Helper()
	if i >= len(parts) || parts[i].Kind != model.KindText || !strings.HasPrefix(parts[i].Text, "[") || !strings.HasSuffix(parts[i].Text, "]") {
		t.Fatalf("part %d of %+v is no sender's header", i, parts)
	}
	out := slices.Clone(parts)
	out[i].Text = senderHeader
	return out
}
