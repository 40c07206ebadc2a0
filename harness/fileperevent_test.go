package harness_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/model"
)

// TestFilePerEventConversationRefused: a message to a conversation kept
// in the layout from before the log, a file per event
// (events/00000000000000000001.json), is refused saying so before the
// model is asked, never answered as the first of a conversation begun
// anew; the folder's files are as they were, and another conversation
// of the agent is answered.
func TestFilePerEventConversationRefused(t *testing.T) {
	r := newRig(t)
	const thread = "telegram:61"
	dir, err := r.Paths().Conversation(thread)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "events"), 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for seq, text := range []string{"remember the roses", "I will"} {
		kind := "message"
		if seq == 1 {
			kind = "answer"
		}
		name := filepath.Join("events", fmt.Sprintf("%020d.json", seq+1))
		files[name] = fmt.Sprintf(`{"seq":%d,"time":"2025-06-01T10:00:0%dZ","kind":%q,"text":%q}`+"\n", seq+1, seq, kind, text)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(files[name]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r.Model.Push(model.Response{Text: "never asked"})
	_, x, err := r.Say(thread, "what did I ask you to remember?", nil)
	told := x.Text()
	if err == nil {
		told += " " + fmt.Sprint(err)
	} else {
		told = err.Error()
	}
	if !strings.Contains(told, "a file per event") {
		t.Fatalf("the message was answered %q (err %v), not refused naming the layout", x.Text(), err)
	}
	if n := len(r.Model.Requests()); n != 0 {
		t.Fatalf("the model was asked %d times", n)
	}
	got, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name() != "events" {
		var names []string
		for _, e := range got {
			names = append(names, e.Name())
		}
		t.Errorf("the folder holds %q, want events/ alone", names)
	}
	for name, want := range files {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; was %q", name, b, err, want)
		}
	}
	if _, x, err := r.Say("telegram:62", "hello", nil); err != nil || x.Text() != "never asked" {
		t.Errorf("another conversation: %q, %v", x.Text(), err)
	}
}
