package harness_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lnk-dev/link/model"
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
