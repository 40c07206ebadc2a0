package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/lnk-dev/link/acp"
)

// turn is one prompt forwarded to the harness: what the harness streams
// for its session goes back to the bridge under the thread's name, in
// order, through a queue of its own, so a slow bridge never holds up the
// harness's other sessions.
type turn struct {
	thread    string
	session   string
	h         *harness
	bridge    *acp.Conn
	cancelled atomic.Bool
	failOnce  sync.Once
	failed    chan struct{} // closed when the turn failed on the hub's side
	failure   error         // why, once failed is closed

	mu    sync.Mutex
	queue []note // notifications waiting to be sent
	size  int
	gone  bool            // the bridge went or fell too far behind: nothing more is sent
	text  strings.Builder // the answer's text, kept should its bridge go
	cut   bool            // text passed maxAnswerText: cut there, nothing more kept
	wake  chan struct{}
	shut  bool
	done  chan struct{} // closed once the queue is sent (or dropped) and shut
}

// note is one notification for the bridge: its method and raw params.
type note struct {
	method string
	params []byte
}

// maxQueued bounds what waits for a slow bridge; past it the bridge is
// dropped, the turn running on.
const maxQueued = 64 << 20

func newTurn(h *harness, thread, session string, bridge *acp.Conn) *turn {
	t := &turn{thread: thread, session: session, h: h, bridge: bridge, failed: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go t.send()
	return t
}

// update queues one of the harness's session/update params for the
// bridge, its sessionId made the thread's; a command list gets Link's
// owned actions added.
func (t *turn) update(params json.RawMessage, commands bool, chunk string) {
	out, err := withSession(params, t.thread)
	if err != nil {
		return
	}
	if chunk != "" {
		t.mu.Lock()
		t.keep(chunk)
		t.mu.Unlock()
	}
	if commands {
		out = t.h.hb.withOwned(out)
	}
	t.push(acp.MethodSessionUpdate, out)
}

// maxAnswerText bounds the answer text a turn keeps for recover: what a
// bridge reads of one.
const maxAnswerText = 16 << 20

// keptCutNote ends a kept answer cut at maxAnswerText, saying why.
const keptCutNote = "\n\n[The answer was cut here: it passed 16 MiB, the most a chat's bridge reads of one.]"

// keep adds chunk to the answer's text kept should its bridge go, up to
// maxAnswerText: the part of the chunk that passes it is cut, at a
// character's start, with keptCutNote, and nothing after is kept. t.mu
// is held.
func (t *turn) keep(chunk string) {
	if t.cut {
		return
	}
	room := maxAnswerText - len(keptCutNote) - t.text.Len()
	if len(chunk) <= room {
		t.text.WriteString(chunk)
		return
	}
	for room > 0 && !utf8.RuneStart(chunk[room]) {
		room--
	}
	t.text.WriteString(chunk[:room])
	t.text.WriteString(keptCutNote)
	t.cut = true
}

// answerText is the text the turn's agent_message_chunks streamed.
func (t *turn) answerText() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.text.String()
}

// bridgeGone says whether the bridge went (or was dropped) during the
// turn.
func (t *turn) bridgeGone() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gone
}

// push queues a notification for the bridge.
func (t *turn) push(method string, params []byte) {
	t.mu.Lock()
	if !t.gone {
		t.queue = append(t.queue, note{method, params})
		t.size += len(params)
		if t.size > maxQueued {
			t.gone = true
			t.queue, t.size = nil, 0
			t.bridge.Close()
		}
	}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// send writes the queue to the bridge until the turn is shut.
func (t *turn) send() {
	defer close(t.done)
	ctx := context.Background()
	for {
		t.mu.Lock()
		q := t.queue
		t.queue, t.size = nil, 0
		shut, gone := t.shut, t.gone
		t.mu.Unlock()
		for i, n := range q {
			if gone {
				break
			}
			if err := t.bridge.Notify(ctx, n.method, json.RawMessage(n.params)); err != nil {
				t.mu.Lock()
				t.gone = true
				t.mu.Unlock()
				gone = true
			}
			q[i] = note{}
		}
		if shut && len(q) == 0 {
			return
		}
		if !shut {
			<-t.wake
		}
	}
}

// close shuts the queue and waits until what it held was sent.
func (t *turn) close() {
	t.mu.Lock()
	t.shut = true
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
	<-t.done
}

// fail ends the turn with err before the harness answers it; the first
// failure is the one told.
func (t *turn) fail(err error) {
	t.failOnce.Do(func() {
		t.failure = err
		close(t.failed)
	})
}

// failedWith is why the turn failed on the hub's side, nil if it didn't.
func (t *turn) failedWith() error {
	select {
	case <-t.failed:
		return t.failure
	default:
		return nil
	}
}

// withSession is session/update's (or any session method's) params with
// their sessionId made session, every other member as it came.
func withSession(params json.RawMessage, session string) ([]byte, error) {
	id, _ := json.Marshal(session)
	return setMember(params, "sessionId", id)
}

// setMember is the JSON object obj with its member key set to value, every
// other member as it came, byte for byte (in name order).
func setMember(obj json.RawMessage, key string, value []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("set member: not an object")
	}
	m[key] = value
	keys := make([]string, 0, len(m))
	size := 2
	for k, v := range m {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	sort.Strings(keys)
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = append(b, m[k]...)
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string, without HTML escapes.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}
