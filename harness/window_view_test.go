package harness

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/lnk-dev/link/harness/window"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// mixedConversation is a conversation of about n events with everything
// a window meets: the owner's messages and others', steered ones, ones
// that joined a turn while the model answered, headers, attachments,
// answers with thinking and calls (their results in order, late, missing
// or under an id used before), model_set, chat_set, checkpoints,
// failures, and summaries each moving the window's start (the
// checkpoint of the answers after it). starts are the window's starts
// the conversation went through.
func mixedConversation(seed uint64, n int) (events []store.Event, starts []int64) {
	rng := rand.New(rand.NewPCG(seed, 29))
	t0 := time.Date(2026, 12, 8, 1, 0, 0, 0, time.UTC)
	cp := store.Checkpoint{Start: 1, StartTime: t0}
	starts = []int64{1}
	add := func(e store.Event) store.Event {
		e.Seq = int64(len(events) + 1)
		e.Time = t0.Add(time.Duration(e.Seq) * time.Second)
		events = append(events, e)
		return e
	}
	word := func() string {
		return [...]string{"hello", "the plan", "ok", "", "写作", "what did I say?"}[rng.IntN(6)]
	}
	message := func(steered bool) store.Event {
		e := store.Event{Kind: store.KindMessage, Text: word(), Steered: steered}
		if rng.IntN(4) == 0 {
			e.Header = "[" + strconv.Itoa(len(events)) + " Link, your owner]"
		}
		if rng.IntN(5) == 0 {
			e.From, e.FromName, e.Hops = "link:ana", "Ana", rng.IntN(3)
		}
		switch rng.IntN(10) {
		case 0:
			e.Parts = []store.Part{{Type: "image", MimeType: "image/png", Data: "iVBORw0KGgo="}}
		case 1:
			e.Parts = []store.Part{{Type: "audio", MimeType: "audio/ogg", Data: "T2dnUw=="}}
		case 2:
			e.Parts = []store.Part{{Type: "resource", MimeType: "text/plain", Name: "notes.txt", Text: "a note"}}
		case 3:
			e.Parts = []store.Part{{Type: "resource", MimeType: "application/pdf", Name: "a.pdf", Data: "JVBERi0="}}
		}
		return add(e)
	}
	calls := 0
	for len(events) < n {
		first := message(rng.IntN(8) == 0)
		for round := 0; round < 3; round++ {
			seen := events[len(events)-1].Seq
			if rng.IntN(6) == 0 { // a message joins while the model answers
				message(true)
			}
			a := store.Event{Kind: store.KindAnswer, Text: word(), Seen: seen, Window: &store.Checkpoint{Start: cp.Start, StartTime: cp.StartTime}}
			if rng.IntN(5) == 0 {
				a.Thinking = []store.Thinking{{Text: "hm", Signature: "sig"}}
			}
			if rng.IntN(3) == 0 {
				for range 1 + rng.IntN(2) {
					calls++
					id := "call-" + strconv.Itoa(calls)
					if rng.IntN(10) == 0 {
						id = "call-1" // an id used before
					}
					a.Calls = append(a.Calls, store.ToolCall{ID: id, Name: "files__read", Input: `{"path":"a"}`})
				}
			}
			a = add(a)
			for _, c := range a.Calls {
				switch rng.IntN(6) {
				case 0: // never answered
				case 1: // answered after a message that came between
					message(true)
					add(store.Event{Kind: store.KindToolResult, CallID: c.ID, Tool: c.Name, Text: "late", IsError: rng.IntN(2) == 0})
				default:
					add(store.Event{Kind: store.KindToolResult, CallID: c.ID, Tool: c.Name, Text: "contents " + c.ID})
				}
			}
			if len(a.Calls) == 0 {
				break
			}
		}
		switch rng.IntN(12) {
		case 0:
			add(store.Event{Kind: store.KindModelSet, Model: "fast"})
		case 1:
			v := true
			add(store.Event{Kind: store.KindChatSet, Verbose: &v})
		case 2:
			add(store.Event{Kind: store.KindFailure, Text: "[The model couldn't answer: down]", Seen: first.Seq})
		case 3:
			add(store.Event{Kind: store.KindCheckpoint, Window: &store.Checkpoint{Start: cp.Start, StartTime: cp.StartTime}})
		case 4, 5: // the window moves on to a message past its start, summarized
			var at []store.Event
			for _, e := range events {
				if e.Seq > cp.Start && e.Kind == store.KindMessage && !e.Steered {
					at = append(at, e)
				}
			}
			if len(at) < 2 {
				break
			}
			to := at[len(at)/2]
			next := store.Checkpoint{Start: to.Seq, StartTime: to.Time, TokensBefore: int64(to.Seq) * 10}
			add(store.Event{Kind: store.KindSummary, Text: "so far: " + word(), Covers: &store.Range{From: 1, To: to.Seq - 1}, Window: &next})
			cp = next
			starts = append(starts, cp.Start)
		}
	}
	return events, starts
}

// asView is r's window at cp (reader.view) as window.Of gives it.
func asView(r *reader, cp store.Checkpoint) window.View {
	v := r.view(cp)
	out := window.View{Start: cp, Tokens: v.tokens(), Events: []store.Event{}}
	if v.summary >= 0 {
		s := r.events[v.summary]
		out.Summary = &s
	}
	for _, e := range r.events[v.first:v.to] {
		if e.Kind == store.KindMessage || e.Kind == store.KindAnswer || e.Kind == store.KindToolResult {
			out.Events = append(out.Events, e)
		}
	}
	return out
}

// builtAsBefore is the request's messages as a turn made them before the
// window was kept: window.Of's events, its summary copied in front, made
// into messages (buildRequest).
func builtAsBefore(events []store.Event, cp store.Checkpoint, withTools bool, takes func(model.Modality) bool) []model.Message {
	v := window.Of(events, cp)
	es := v.Events
	if v.Summary != nil {
		es = append([]store.Event{*v.Summary}, es...)
	}
	var tools []model.Tool
	if withTools {
		tools = []model.Tool{{Name: "files__read"}}
	}
	return buildRequest(es, "m", nil, tools, model.ToolAuto, 0, takes).Messages
}

// takesNoAudio is a model that takes images but no audio and no
// documents.
func takesNoAudio(m model.Modality) bool { return m == model.ModalityImage }

// The window a turn keeps and extends as events are added is the one
// window.Of finds afresh, at every length of a conversation with
// everything in it and at starts it went through.
func TestKeptView(t *testing.T) {
	for seed := range uint64(4) {
		events, starts := mixedConversation(seed, 300)
		for _, start := range []int64{1, starts[len(starts)/2], starts[len(starts)-1], events[len(events)/3].Seq} {
			cp := store.Checkpoint{Start: start}
			r := reader{}
			for i := range events {
				r.events = append(r.events, events[i])
				got, want := asView(&r, cp), window.Of(events[:i+1], cp)
				if got.Tokens != want.Tokens || len(got.Events) != len(want.Events) || (got.Summary == nil) != (want.Summary == nil) || got.Summary != nil && got.Summary.Seq != want.Summary.Seq {
					t.Fatalf("seed %d, from %d, %d events: view %+v, want %+v", seed, start, i+1, got, want)
				}
				if i%7 != 0 && i != len(events)-1 {
					continue
				}
				if !sameJSON(got, want) {
					t.Fatalf("seed %d, from %d, %d events: view %+v, want %+v", seed, start, i+1, got, want)
				}
			}
		}
	}
}

// sameJSON says whether a and b marshal to the same bytes.
func sameJSON(a, b any) bool { return js(a) == js(b) }

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint("unmarshalable: ", err)
	}
	return string(b)
}

// The messages a turn keeps and extends as events are added are those a
// request was made of before they were kept (window.Of's events, the
// summary copied in front, buildRequest), byte for byte: at every length
// of conversations with everything in them, the window moving on at
// their summaries, with tools offered and not, a model taking audio and
// one not, kept between turns (history) or not. And what a request was
// handed is never changed by a later one. The last model_set and
// chat_set kept with the events are those among them.
func TestKeptMessagesAsBuilt(t *testing.T) {
	takesAll := func(model.Modality) bool { return true }
	type handed struct {
		msgs []model.Message
		json string
	}
	for seed := range uint64(6) {
		events, _ := mixedConversation(seed, 400)
		rng := rand.New(rand.NewPCG(seed, 64))
		hs := newHistory(1 << 30)
		c := &conv{agent: "main", thread: "link:mixed"}
		r := &reader{c: c, hist: hs}
		var kept []handed
		withTools, name, takes := true, "a", takesNoAudio
		for i := range events {
			r.events = append(r.events, events[i])
			r.readTo = len(r.events)
			r.noteCheckpoint(events[i : i+1])
			if rng.IntN(3) == 0 {
				continue // a turn's events come more than one at a time
			}
			switch rng.IntN(40) {
			case 0:
				withTools = !withTools
			case 1:
				name, takes = "b", takesAll
			case 2:
				name, takes = "a", takesNoAudio
			}
			got := r.keptMessages(r.view(r.cp), withTools, name, takes)
			if want := builtAsBefore(events[:i+1], r.cp, withTools, takes); !sameJSON(got, want) {
				t.Fatalf("seed %d, %d events, from %d, tools %v, model %s: messages\n%s\nwant\n%s", seed, i+1, r.cp.Start, withTools, name, js(got), js(want))
			}
			if i%5 == 0 {
				kept = append(kept, handed{got, js(got)})
			}
			var wantModel, wantChat *store.Event
			for j, e := range r.events {
				switch {
				case e.Kind == store.KindModelSet && e.Model != "":
					wantModel = &r.events[j]
				case e.Kind == store.KindChatSet && e.Verbose != nil:
					wantChat = &r.events[j]
				}
			}
			if gotModel, gotChat := r.lastSet(); gotModel != wantModel || gotChat != wantChat {
				t.Fatalf("seed %d, %d events: the last model_set and chat_set %v and %v, want %v and %v", seed, i+1, gotModel, gotChat, wantModel, wantChat)
			}
			if rng.IntN(4) == 0 { // the turn ends; the next one here takes what it kept
				r.keep(func() time.Time { return time.Time{} })
				r = &reader{c: c, hist: hs}
				r.resume()
			}
		}
		for _, h := range kept {
			if js(h.msgs) != h.json {
				t.Fatalf("seed %d: a request's messages changed after it was handed them", seed)
			}
		}
	}
}
