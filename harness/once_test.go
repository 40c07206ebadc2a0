package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// onceMeta is a prompt's _meta from schedule:r1, sent once as id.
func onceMeta(id string, since time.Time) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"link":               map[string]any{"from": "schedule:r1"},
		contract.MessageMeta: map[string]any{"id": id, "since": since.Format(time.RFC3339Nano)},
	})
	return b
}

// alreadyReceived fails t unless err is the harness's answer to a message
// it holds already, naming seq.
func alreadyReceived(t *testing.T, err error, id string, seq int64) {
	t.Helper()
	var ae *acp.Error
	if !errors.As(err, &ae) || ae.Code != contract.CodeAlreadyReceived {
		t.Fatalf("a message sent again answered %v, want code %d", err, contract.CodeAlreadyReceived)
	}
	var got contract.AlreadyReceived
	if json.Unmarshal(ae.Data, &got) != nil || got.ID != id || got.Seq != seq {
		t.Fatalf("already received's data %s, want id %s seq %d", ae.Data, id, seq)
	}
	if !strings.Contains(ae.Message, "received already") {
		t.Fatalf("already received's message %q says nothing plain", ae.Message)
	}
}

// A message sent once is stored with its id; the same id sent again (its
// sender crashed before it knew) is answered already received, naming
// the event, with nothing stored and no second turn, and a message of
// another id is a turn as ever (TestMessageOnce).
func TestMessageOnce(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "reminded"}, model.Response{Text: "second"})
	since := time.Now()
	if _, _, err := r.Say("telegram:5", "call the bank", onceMeta("r1.1", since)); err != nil {
		t.Fatal(err)
	}
	before := r.Events("telegram:5")
	if before[0].Kind != store.KindMessage || before[0].MessageID != "r1.1" || before[0].From != "schedule:r1" {
		t.Fatalf("the message stored as %+v, want its id and sender", before[0])
	}
	_, _, err := r.Say("telegram:5", "call the bank", onceMeta("r1.1", since))
	alreadyReceived(t, err, "r1.1", 1)
	if after := r.Events("telegram:5"); len(after) != len(before) {
		t.Fatalf("a message sent again wrote %d events", len(after)-len(before))
	}
	if n := len(r.Requests("telegram:5")); n != 1 {
		t.Fatalf("the model was asked %d times, want once", n)
	}
	if _, _, err := r.Say("telegram:5", "call the bank", onceMeta("r1.2", time.Now())); err != nil {
		t.Fatal(err)
	}
	if n := count(r.Events("telegram:5"), func(e store.Event) bool { return e.MessageID == "r1.2" }); n != 1 {
		t.Fatalf("%d messages of another id, want one", n)
	}
}

// A message sent again while its first's turn still runs (the sender
// restarted at once) is refused as already received, never stored as a
// message that joins the turn (TestMessageOnceWhileRunning).
func TestMessageOnceWhileRunning(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "done"})
	reached, release := r.HoldNext()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	x := r.Dial(ctx, "telegram:5")
	first := make(chan error, 1)
	since := time.Now()
	go func() {
		_, err := x.Client.Prompt(ctx, "telegram:5", []acp.Block{{Type: "text", Text: "hi"}}, onceMeta("r1.7", since))
		first <- err
	}()
	<-reached
	_, _, err := r.Say("telegram:5", "hi", onceMeta("r1.7", since))
	alreadyReceived(t, err, "r1.7", 1)
	release()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	x.Client.Close()
	if n := count(r.Events("telegram:5"), isKind(store.KindMessage)); n != 1 {
		t.Fatalf("%d messages stored, want one", n)
	}
}

// The id is found past the latest events read first: a message sent again
// after a hundred events came is still refused; one whose since is after
// the first was stored (less the margin) is not looked for so far back
// (TestMessageOnceFarBack).
func TestMessageOnceFarBack(t *testing.T) {
	r := newRig(t)
	since := time.Now()
	r.Model.Push(model.Response{Text: "first"})
	if _, _, err := r.Say("telegram:5", "first", onceMeta("r1.1", since)); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		r.Model.Push(model.Response{Text: fmt.Sprint("answer ", i)})
		if _, _, err := r.Say("telegram:5", fmt.Sprint("owner ", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	n := len(r.Events("telegram:5"))
	_, _, err := r.Say("telegram:5", "first", onceMeta("r1.1", since))
	alreadyReceived(t, err, "r1.1", 1)
	if got := len(r.Events("telegram:5")); got != n {
		t.Fatalf("a message sent again wrote %d events", got-n)
	}
}

// A _meta's link.local/message that breaks a rule is refused naming it,
// nothing stored (TestMessageOnceRefused).
func TestMessageOnceRefused(t *testing.T) {
	r := newRig(t)
	for _, meta := range []string{
		`{"link.local/message": "r1"}`,
		`{"link.local/message": {"id": "a b", "since": "2026-12-07T10:00:00Z"}}`,
		`{"link.local/message": {"id": "r1", "since": "yesterday"}}`,
		`{"link.local/message": {"id": "r1", "since": "2026-12-07T10:00:00Z", "extra": 1}}`,
		`{"link.local/message": {"since": "2026-12-07T10:00:00Z"}}`,
	} {
		_, _, err := r.Say("telegram:5", "hi", json.RawMessage(meta))
		var ae *acp.Error
		if !errors.As(err, &ae) || ae.Code != acp.CodeInvalidParams || !strings.Contains(ae.Message, contract.MessageMeta) {
			t.Errorf("%s answered %v, want invalid params naming %s", meta, err, contract.MessageMeta)
		}
	}
	if ev := r.Events("telegram:5"); len(ev) != 0 {
		t.Fatalf("refused messages stored %d events", len(ev))
	}
}

// A message sent once asking its answer be kept for _link/recover streams
// nothing to its caller, who may go once it has _link/taken: the turn's
// answer is kept, as a caller gone's, for lnk agent chat or the bridge to
// take (TestMessageOnceRecover).
func TestMessageOnceRecover(t *testing.T) {
	r := newRig(t)
	r.Model.Push(model.Response{Text: "Time to call the bank."})
	meta, _ := json.Marshal(map[string]any{
		"link":               map[string]any{"from": "schedule:r1"},
		contract.MessageMeta: map[string]any{"id": "r1.1", "since": time.Now().Format(time.RFC3339Nano), "recover": true},
	})
	res, x, err := r.Say("link:chat", "call the bank", meta)
	if err != nil || res.StopReason != acp.StopEndTurn {
		t.Fatalf("answered %+v, %v", res, err)
	}
	if got := x.Text(); got != "" {
		t.Fatalf("streamed %q to a caller that asked it kept", got)
	}
	kept, err := r.Answers().Pending(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || kept[0].Thread != "link:chat" || kept[0].Text != "Time to call the bank." {
		t.Fatalf("kept %+v", kept)
	}
}
