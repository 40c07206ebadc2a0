package main

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
	"github.com/lnk-dev/link/model/fakeprovider"
)

// waitOut waits for out to hold want, failing after a few seconds.
func waitOut(t *testing.T, out *safeBuffer, want string) {
	t.Helper()
	if err := testwait.Err(10*time.Second, strconv.Quote(want), func() bool { return strings.Contains(out.String(), want) }); err != nil {
		t.Fatalf("%v in %q", err, out.String())
	}
}

// Ctrl-C while an answer streams stops the turn (session/cancel): the
// chat shows what streamed and the note that it stopped, and goes on;
// the next message is answered as any other, and Ctrl-C at the prompt
// ends the chat.
func TestChatInterrupt(t *testing.T) {
	fake := fakeprovider.New()
	defer fake.Close()
	fake.Script(
		fakeprovider.Turn{Text: "Once upon a time there was a very long story that went on", Delay: 300 * time.Millisecond},
		fakeprovider.Turn{Text: "short"},
	)
	env := map[string]string{"LNK_HOME": t.TempDir(), "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.URL()}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	in, typed := io.Pipe()
	defer typed.Close()
	intr := make(chan os.Signal, 1)
	var out, errb safeBuffer
	exit := make(chan int, 1)
	go func() { exit <- runChat(ctx, nil, env, in, false, intr, &out, &errb) }()

	io.WriteString(typed, "tell me a story\n")
	waitOut(t, &out, "Once")
	intr <- os.Interrupt
	waitOut(t, &out, "[Stopped: the turn was asked to end here.]\n")
	if strings.Contains(out.String(), "went on") {
		t.Fatalf("the whole answer came: %q", out.String())
	}
	io.WriteString(typed, "and now?\n")
	waitOut(t, &out, "short\n")
	intr <- os.Interrupt
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ctrl-C at the prompt didn't end the chat")
	}
	if reqs := fake.Requests(); len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(reqs))
	}
}
