package harness_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
	"github.com/lnk-dev/link/store"
)

// A turn whose model can't be reached is told so, and the failure is kept
// as a failure, not an answer: the copy for people shows it, the model
// never reads it as its own words, and the message it failed to answer is
// answered by the next turn, whose request holds it.
func TestFailureNotAnswer(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:27"
	r.Model.Fail(errors.New("dial tcp 127.0.0.1:9: connect: connection refused"))
	r.Model.Push(model.Response{Text: "Both answered."})

	_, x, err := r.Say(thread, "the first message", nil)
	if err != nil {
		t.Fatal(err)
	}
	const told = "[The model couldn't answer: dial tcp 127.0.0.1:9: connect: connection refused]"
	if x.Text() != told {
		t.Fatalf("the caller was told %q", x.Text())
	}
	events := r.Events(thread)
	if n := len(events); n != 2 || events[1].Kind != store.KindFailure || events[1].Text != told || events[1].Seen != 1 {
		t.Fatalf("events %+v", events)
	}
	if _, _, err := r.Say(thread, "the second message", nil); err != nil {
		t.Fatal(err)
	}
	reqs := r.Requests(thread)
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var said []string
	for _, m := range reqs[1].Messages {
		for _, p := range m.Parts {
			said = append(said, string(m.Role)+": "+p.Text)
		}
	}
	all := strings.Join(said, "\n")
	if strings.Contains(all, "couldn't answer") || !strings.Contains(all, "the first message") || !strings.Contains(all, "the second message") {
		t.Fatalf("the second request says:\n%s", all)
	}
	if len(reqs[1].Messages) != 1 || reqs[1].Messages[0].Role != model.RoleUser {
		t.Fatalf("the second request's messages: %+v", reqs[1].Messages)
	}
	chat, err := r.copyOf(thread)
	if err != nil {
		t.Fatal(err)
	}
	c := string(chat)
	first, failed, answered := strings.Index(c, "the first message"), strings.Index(c, told), strings.Index(c, "Both answered.")
	if first < 0 || failed < first || answered < failed {
		t.Fatalf("the copy for people:\n%s", c)
	}
}

// A model that can't be reached hands the round to the settings' first
// fallback, sent its own instructions in the first's place and the rest
// of the prompt the same; its answer's event names it. A prompt too long
// is the window's, and goes to no fallback.
func TestFallbackModel(t *testing.T) {
	r := newRig(t)
	p := r.Paths()
	for model, text := range map[string]string{"anthropic/claude-test": "Claude's own instructions.", "openai/gpt-6-luna": "Luna's own instructions."} {
		dir := filepath.Join(p.Instructions(), "models", model)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "instruction.md"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r.SetSettings(func(s *harness.Settings) {
		s.Model = "fast"
		s.Aliases["luna"] = "openai/gpt-6-luna"
		s.Fallbacks = []string{"fast", "luna"}
	})
	const thread = "telegram:28"
	r.Model.Fail(errors.New("dial tcp 127.0.0.1:9: connect: connection refused"))
	r.Model.Push(model.Response{Text: "Luna answers."})
	_, x, err := r.Say(thread, "anyone there?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if x.Text() != "Luna answers." {
		t.Fatalf("streamed %q", x.Text())
	}
	events := r.Events(thread)
	last := events[len(events)-1]
	if last.Kind != store.KindAnswer || last.Text != "Luna answers." || last.Model != "openai/gpt-6-luna" || last.Provider != scripted.ScriptedName {
		t.Fatalf("the answer's event %+v", last)
	}
	reqs := r.Requests(thread)
	if len(reqs) != 2 || reqs[0].Model != "anthropic/claude-test" || reqs[1].Model != "openai/gpt-6-luna" {
		t.Fatalf("%d requests: %+v", len(reqs), reqs)
	}
	// The same prompt but for the model's own section, in its place.
	if len(reqs[0].System) != len(reqs[1].System) {
		t.Fatalf("sections %d then %d", len(reqs[0].System), len(reqs[1].System))
	}
	changed := 0
	for i := range reqs[0].System {
		a, b := reqs[0].System[i], reqs[1].System[i]
		if a.Text == b.Text {
			continue
		}
		changed++
		if !strings.Contains(a.Text, "Claude's own instructions.") || !strings.Contains(b.Text, "Luna's own instructions.") || strings.Contains(b.Text, "Claude's") {
			t.Fatalf("section %d: %q, then %q", i, a.Text, b.Text)
		}
	}
	if changed != 1 || !cmp.Equal(reqs[0].Messages, reqs[1].Messages) {
		t.Fatalf("%d sections differ; messages %+v, then %+v", changed, reqs[0].Messages, reqs[1].Messages)
	}

	// Too long for the first model's window: told so, no fallback asked.
	r.Model.Fail(model.ClassifyError(400, `{"error":{"message":"prompt is too long: 300000 tokens"}}`))
	if _, x, err = r.Say(thread, "and now?", nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x.Text(), "prompt is too long") || len(r.Requests(thread)) != 3 {
		t.Fatalf("streamed %q after %d requests", x.Text(), len(r.Requests(thread)))
	}
}
