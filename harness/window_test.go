package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/transcript"
)

// winModel answers each turn with a numbered answer of about 60 tokens,
// and a request for a summary with a numbered summary, as a model
// would; it keeps every request. failSummaries fails that many summary
// requests first; notes are the calls the first summary request answers
// with; hold, when set, holds each summary request until it's closed.
type winModel struct {
	mu            sync.Mutex
	reqs          []model.Request
	n, sums       int
	failSummaries int
	notes         []model.ToolCall
	hold          chan struct{}
	asked         chan struct{} // closed at the first summary request, when set
}

func isAsk(req model.Request) bool {
	m := req.Messages
	for i := len(m) - 1; i >= 0; i-- {
		if m[i].Role != model.RoleUser {
			continue
		}
		for _, p := range m[i].Parts {
			if strings.HasPrefix(p.Text, "[Link Harness: the start of this conversation") {
				return true
			}
		}
		if i < len(m)-1 {
			return false // the ask, followed by the notes' round
		}
	}
	return false
}

func (w *winModel) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	w.mu.Lock()
	w.reqs = append(w.reqs, req)
	if isAsk(req) {
		w.sums++
		if w.asked != nil && w.sums == 1 {
			close(w.asked)
		}
		hold := w.hold
		fail := w.failSummaries > 0
		if fail {
			w.failSummaries--
		}
		notes := w.notes
		w.notes = nil
		n := w.sums
		w.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-ctx.Done():
				return model.Response{}, ctx.Err()
			}
		}
		if fail {
			return model.Response{}, errors.New("summary refused")
		}
		if len(notes) > 0 {
			return model.Response{Calls: notes, StopReason: model.StopToolUse}, nil
		}
		return model.Response{Text: fmt.Sprintf("SUMMARY %d", n), StopReason: model.StopEnd}, nil
	}
	w.n++
	text := fmt.Sprintf("answer %d %s", w.n, strings.Repeat("a", 220))
	w.mu.Unlock()
	if err := onDelta(model.Delta{Text: text}); err != nil {
		return model.Response{}, err
	}
	return model.Response{Text: text, StopReason: model.StopEnd}, nil
}

func (w *winModel) requests() []model.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]model.Request(nil), w.reqs...)
}

// winRig is a rig whose model is w, over a window of max tokens set.
func winRig(t *testing.T, w *winModel, set window.Settings) *rig {
	r := newRig(t, func(c *harness.Config) {
		c.Provider = func(model.Route) (model.Provider, error) { return w, nil }
	})
	r.SetSettings(func(s *harness.Settings) { s.Window = set })
	return r
}

// small is a window of 1,400 tokens of which the conversation has about
// 1,000: a summary is due at about 750, every five turns or so.
func small() window.Settings {
	return window.Settings{Max: 1400, MaxSet: true, CompactAt: 0.75, Answer: 0.05, Margin: 0.01}
}

// waitSummarized waits for a summary after an answer in thread to end.
func (r *rig) waitSummarized(thread string) {
	r.T.Helper()
	if done, ok := r.Harness.Summarizing(testAgent, thread); ok {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			r.T.Fatal("the summary after the answer never ended")
		}
	}
}

// talk sends n messages in thread, each about 60 tokens, each answered
// and any summary after it ended.
func (r *rig) talk(thread string, from, n int) {
	r.T.Helper()
	for i := from; i < from+n; i++ {
		r.sayOK(thread, fmt.Sprintf("message %d %s", i, strings.Repeat("m", 200)))
		r.waitSummarized(thread)
	}
}

func msgJSON(t *testing.T, m any) string {
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSummaryAfterAnswer: past compact_at the turn answers with the
// window it last sent, then asks for the summary as a continuation of
// that same request; the summary is an event, written once, that heads
// the window from the drop point on and never reaches the copy for
// people; between drop points each request's messages are a prefix of
// the next's.
func TestSummaryAfterAnswer(t *testing.T) {
	w := &winModel{}
	r := winRig(t, w, small())
	const thread = "telegram:50"
	r.talk(thread, 0, 30)
	reqs := w.requests()
	var sums []int
	for i, q := range reqs {
		if isAsk(q) {
			sums = append(sums, i)
		}
	}
	if len(sums) < 3 {
		t.Fatalf("%d summaries asked in 30 turns", len(sums))
	}
	for _, i := range sums {
		prev, ask := reqs[i-1], reqs[i]
		if isAsk(prev) {
			t.Fatalf("request %d: two asks in a row", i)
		}
		// The continuation: the answered request's messages, its answer,
		// then the ask.
		if !strings.HasPrefix(msgJSON(t, ask.Messages), strings.TrimSuffix(msgJSON(t, prev.Messages), "]")) ||
			len(ask.Messages) != len(prev.Messages)+2 || ask.Messages[len(prev.Messages)].Role != model.RoleAssistant ||
			msgJSON(t, ask.Tools) != msgJSON(t, prev.Tools) || ask.System[0].Text != prev.System[0].Text {
			t.Fatalf("request %d isn't a continuation of %d", i, i-1)
		}
		if i+1 < len(reqs) {
			first := reqs[i+1].Messages[0].Parts[0].Text
			if !strings.HasPrefix(first, window.SummaryHead+"SUMMARY ") {
				t.Fatalf("the request after summary %d starts %.80q", i, first)
			}
		}
	}
	// Between drop points, each request is a prefix of the next.
	drops := map[int]bool{}
	for _, i := range sums {
		drops[i] = true
		drops[i+1] = true
	}
	for i := 1; i < len(reqs); i++ {
		if drops[i] {
			continue
		}
		a, b := msgJSON(t, reqs[i-1].Messages), msgJSON(t, reqs[i].Messages)
		if !strings.HasPrefix(b, strings.TrimSuffix(a, "]")) {
			t.Fatalf("request %d isn't a prefix of %d:\n%s\n%s", i-1, i, a, b)
		}
	}
	// The summaries: each written once, heading the window from its drop
	// point (the next answers' checkpoint), never in the copy.
	events := r.Events(thread)
	var summaries []store.Event
	for _, e := range events {
		if e.Kind == store.KindSummary {
			summaries = append(summaries, e)
		}
	}
	if len(summaries) != len(sums) {
		t.Fatalf("%d summaries written, %d asked", len(summaries), len(sums))
	}
	for _, s := range summaries {
		if s.Covers == nil || s.Window == nil || s.Covers.From != 1 || s.Covers.To+1 != s.Window.Start || s.Window.TokensBefore <= 0 {
			t.Fatalf("summary %+v", s)
		}
	}
	last := summaries[len(summaries)-1]
	for _, e := range events {
		if e.Seq > last.Seq && e.Kind == store.KindAnswer && (e.Window == nil || e.Window.Start != last.Window.Start) {
			t.Fatalf("answer %d after the summary records window %+v, want start %d", e.Seq, e.Window, last.Window.Start)
		}
	}
	dir, _ := r.FolderFiles().Paths.Conversation(thread)
	chat, err := os.ReadFile(filepath.Join(dir, transcript.File))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(chat), "SUMMARY") || !strings.Contains(string(chat), "message 0 ") || !strings.Contains(string(chat), "message 29 ") {
		t.Fatalf("the copy for people:\n%s", chat)
	}
}

// TestSummaryNever: compact_at "never" lets the oldest turns leave
// unsummarized, half the window at a time, and the window then starts
// with the owner's message.
func TestSummaryNever(t *testing.T) {
	w := &winModel{}
	set := small()
	set.Never = true
	r := winRig(t, w, set)
	const thread = "telegram:51"
	r.talk(thread, 0, 30)
	reqs := w.requests()
	moved := 0
	for i, q := range reqs {
		if isAsk(q) {
			t.Fatalf("request %d asks for a summary", i)
		}
		first := q.Messages[0].Parts
		if i > 0 && first[len(first)-1].Text != reqs[i-1].Messages[0].Parts[len(reqs[i-1].Messages[0].Parts)-1].Text {
			moved++
			if !strings.HasPrefix(first[len(first)-1].Text, "message ") {
				t.Fatalf("request %d starts with %q", i, first[len(first)-1].Text)
			}
		}
	}
	if moved < 3 {
		t.Fatalf("the window moved %d times in 30 turns", moved)
	}
	last := reqs[len(reqs)-1]
	if len(last.Messages) > 20 {
		t.Fatalf("the last request holds %d messages", len(last.Messages))
	}
}

// TestSummaryFailsThenRetried: a summary that fails leaves the window
// where it was; the next turn answers with it and tries again.
func TestSummaryFailsThenRetried(t *testing.T) {
	w := &winModel{failSummaries: 1}
	r := winRig(t, w, small())
	const thread = "telegram:52"
	r.talk(thread, 0, 12)
	reqs := w.requests()
	var asks []int
	for i, q := range reqs {
		if isAsk(q) {
			asks = append(asks, i)
		}
	}
	if len(asks) < 2 || asks[1] != asks[0]+2 {
		t.Fatalf("asks at %v, want the second right after the next turn's answer", asks)
	}
	// The failed ask's window is the one the next turn answers with.
	if reqs[asks[0]+1].Messages[0].Parts[0].Text != reqs[asks[0]-1].Messages[0].Parts[0].Text {
		t.Fatal("the window moved without its summary")
	}
	var kept []string
	for _, e := range r.Events(thread) {
		if e.Kind == store.KindSummary {
			kept = append(kept, e.Text)
		}
	}
	if len(kept) == 0 || kept[0] != "SUMMARY 2" {
		t.Fatalf("kept %q, the first the one asked again", kept)
	}
}

// TestPastRoom: a window that has outgrown its room (here, a smaller max
// set mid-conversation) is summarized first, from what leaves alone,
// then answered with the summary heading it.
func TestPastRoom(t *testing.T) {
	w := &winModel{}
	set := small()
	set.Never = true
	set.Max = 6000
	r := winRig(t, w, set)
	const thread = "telegram:53"
	r.talk(thread, 0, 20)
	before := len(w.requests())
	set.Never = false
	set.Max = 1400
	r.SetSettings(func(s *harness.Settings) { s.Window = set })
	r.sayOK(thread, "and now?")
	reqs := w.requests()[before:]
	if len(reqs) < 2 || !isAsk(reqs[0]) {
		t.Fatalf("%d requests, the first an ask: %v", len(reqs), len(reqs) > 0 && isAsk(reqs[0]))
	}
	said := msgJSON(t, reqs[0].Messages)
	if strings.Contains(said, "and now?") {
		t.Fatal("the summary first was given the message that stays")
	}
	ans := reqs[1]
	if !strings.HasPrefix(ans.Messages[0].Parts[0].Text, window.SummaryHead+"SUMMARY 1") || !strings.Contains(msgJSON(t, ans.Messages), "and now?") {
		t.Fatalf("the answer's request: %.200s", msgJSON(t, ans.Messages))
	}
	tokens := 0
	for _, m := range ans.Messages {
		for _, p := range m.Parts {
			tokens += window.Tokens(p.Text)
		}
	}
	if tokens > 1400 {
		t.Fatalf("the answer's request holds %d tokens of a 1,400 window", tokens)
	}
}

// TestSaveNotes: in a conversation its owner spoke in, the model saves
// notes first with memory__remember, and may call nothing else; the
// calls are kept with the summary.
func TestSaveNotes(t *testing.T) {
	w := &winModel{notes: []model.ToolCall{
		{ID: "n1", Name: "memory__remember", Input: `{"note":"likes tea"}`},
		{ID: "n2", Name: "web__fetch", Input: `{}`},
	}}
	set := small()
	set.SaveNotes = true
	r := winRig(t, w, set)
	r.Tools.Add("memory__remember")
	notes := filepath.Join(r.Home, "agents", testAgent, "memory", "notes.md")
	var told *[]string                                              // the tools memory__remember was told the conversation has
	r.Tools.OnCall(func(c model.ToolCall, meta contract.CallMeta) { // memory__remember, as Link Memory writes it
		if c.Name == "memory__remember" {
			told = meta.Tools
			os.MkdirAll(filepath.Dir(notes), 0o755)
			os.WriteFile(notes, []byte("2026-12-01: likes tea\n"), 0o644)
		}
	})
	const thread = "telegram:54"
	narrowed := []string{"memory__remember", "memory__search", "web__fetch"}
	if _, _, err := r.Say(thread, "only these", json.RawMessage(`{"link":{"tools":["memory__remember","memory__search","web__fetch"]}}`)); err != nil {
		t.Fatal(err)
	}
	r.talk(thread, 0, 8)
	var sum *store.Event
	for _, e := range r.Events(thread) {
		if e.Kind == store.KindSummary {
			sum = &e
			break
		}
	}
	if sum == nil || len(sum.Calls) != 1 || sum.Calls[0].Name != "memory__remember" {
		t.Fatalf("summary %+v", sum)
	}
	made, fetched := r.Tools.Count("n1"), r.Tools.Count("n2")
	if made != 1 || fetched != 0 {
		t.Fatalf("memory__remember made %d times, web__fetch %d", made, fetched)
	}
	if told == nil || !slices.Equal(*told, narrowed) {
		t.Fatalf("memory__remember told the conversation's tools are %v, want %q (link.local/tools)", told, narrowed)
	}
	var ask model.Request
	for _, q := range w.requests() {
		if isAsk(q) {
			ask = q
			break
		}
	}
	if !strings.Contains(msgJSON(t, ask.Messages), "memory__remember") || len(ask.Tools) != len(narrowed) {
		t.Fatalf("the ask doesn't ask for notes, or its tools aren't all offered (%d)", len(ask.Tools))
	}
	// The note saved is in the prompt of the requests after the summary,
	// from the notes section on; not in those before it.
	asked, after := false, 0
	for _, q := range w.requests() {
		if isAsk(q) {
			asked = true
			continue
		}
		if asked {
			after++
		}
		var sys strings.Builder
		for _, s := range q.System {
			sys.WriteString(s.Text)
		}
		if has := strings.Contains(sys.String(), "# Your notes\n\n2026-12-01: likes tea"); has != asked {
			t.Fatalf("a request %s the summary has the note: %v\n%s", map[bool]string{false: "before", true: "after"}[asked], has, sys.String())
		}
	}
	if after == 0 {
		t.Fatal("no request after the summary")
	}
}

// TestNoNotesFromOthers: a conversation only others spoke in saves no
// notes.
func TestNoNotesFromOthers(t *testing.T) {
	w := &winModel{}
	set := small()
	set.SaveNotes = true
	r := winRig(t, w, set)
	r.Tools.Add("memory__remember")
	const thread = "telegram:55"
	for i := range 8 {
		meta := json.RawMessage(`{"link":{"from":"schedule:daily","fromName":"daily"}}`)
		if _, _, err := r.Say(thread, fmt.Sprintf("report %d %s", i, strings.Repeat("r", 200)), meta); err != nil {
			t.Fatal(err)
		}
		r.waitSummarized(thread)
	}
	asks := 0
	for _, q := range w.requests() {
		if isAsk(q) {
			asks++
			if strings.Contains(msgJSON(t, q.Messages), "memory__remember") {
				t.Fatal("asked to save notes from others' messages alone")
			}
		}
	}
	if asks == 0 {
		t.Fatal("no summary asked")
	}
	for _, e := range r.Events(thread) {
		if e.Kind == store.KindMessage && e.From != "schedule:daily" {
			t.Fatalf("a message from %q", e.From)
		}
	}
}

// TestMessageWhileSummarizing: a message that comes while the turn
// summarizes after its answer waits for a turn of its own.
func TestMessageWhileSummarizing(t *testing.T) {
	w := &winModel{hold: make(chan struct{}), asked: make(chan struct{})}
	r := winRig(t, w, small())
	const thread = "telegram:56"
	// Talk until a turn's answer leaves a summary to make: its caller
	// has the answer, and the summary is under way.
	for i := 0; ; i++ {
		if i == 10 {
			t.Fatal("no summary due in 10 turns")
		}
		r.sayOK(thread, fmt.Sprintf("message %d %s", i, strings.Repeat("m", 200)))
		if _, ok := r.Harness.Summarizing(testAgent, thread); ok {
			break
		}
	}
	select {
	case <-w.asked:
	case <-time.After(20 * time.Second):
		t.Fatal("no summary asked")
	}
	type said struct {
		steered bool
		err     error
	}
	got := make(chan said, 1)
	r.Harness.SetOnWaitSummarized(func() { close(w.hold) }) // the summary ends once the message waits for it
	go func() {
		res, _, err := r.Say(thread, "while it summarizes", nil)
		got <- said{res.Steered(), err}
	}()
	s := <-got
	if s.err != nil || s.steered {
		t.Fatalf("the message: steered %v, %v", s.steered, s.err)
	}
	var msg store.Event
	for _, e := range r.Events(thread) {
		if e.Kind == store.KindMessage && e.Text == "while it summarizes" {
			msg = e
		}
	}
	if msg.Seq == 0 || msg.Steered {
		t.Fatalf("kept as %+v", msg)
	}
	sumSeq := int64(0)
	for _, e := range r.Events(thread) {
		if e.Kind == store.KindSummary {
			sumSeq = e.Seq
		}
	}
	if sumSeq == 0 || sumSeq > msg.Seq {
		t.Fatalf("summary %d, message %d: the message didn't wait for it", sumSeq, msg.Seq)
	}
}

// tooLongModel refuses every prompt as too long, as Anthropic does.
type tooLongModel struct{}

func (tooLongModel) Stream(context.Context, model.Request, func(model.Delta) error) (model.Response, error) {
	return model.Response{}, model.ClassifyError(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`)
}

// TestTooLongTold: a provider's refusal for length is told to the owner
// with the window sent and the setting that changes it.
func TestTooLongTold(t *testing.T) {
	r := newRig(t, func(c *harness.Config) {
		c.Provider = func(model.Route) (model.Provider, error) { return tooLongModel{}, nil }
	})
	r.SetSettings(func(s *harness.Settings) { s.Window = window.Settings{Max: 250000, MaxSet: true} })
	_, x, err := r.Say("telegram:57", "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	text := x.Text()
	for _, w := range []string{"too long", "250000 tokens", "window.max", "model-facts.toml"} {
		if !strings.Contains(text, w) {
			t.Errorf("the owner was told %q, without %q", text, w)
		}
	}
}
