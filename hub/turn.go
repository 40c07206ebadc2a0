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

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/internal/jsonx"
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
	wire  int             // the text's bytes as the bridge reads them
	cut   bool            // text passed maxAnswerText: cut there, nothing more sent or kept
	msgID string          // the messageId of the answer's last chunk that had one
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
// owned actions added. chunk is an agent_message_chunk's text: the
// answer's text streamed stops at what a bridge reads of one (cut, with
// keptCutNote); any other update past what a bridge reads of a message
// is dropped, said in the log.
//
// Once the bridge has gone, only the text is kept; and once that is cut
// too, the turn is cancelled: nobody can get more of it, so a harness
// streaming on is not read for nothing until the turn's deadline.
func (t *turn) update(params json.RawMessage, commands bool, chunk string) {
	if chunk != "" {
		t.mu.Lock()
		sent, cut, ok := t.keep(chunk)
		over := t.cut && t.gone
		t.mu.Unlock()
		if over {
			t.cancel()
		}
		if !ok {
			return
		}
		if cut {
			params = cutChunk(params, sent)
		}
	}
	if t.bridgeGone() {
		return
	}
	if chunk == "" && len(params) > maxAnswerText {
		t.h.hb.cfg.Logger.Warn("harness sent an update past what a bridge reads; not sent", "thread", t.thread, "bytes", len(params))
		return
	}
	out, err := withSession(params, t.thread)
	if err != nil {
		return
	}
	if commands {
		out = t.h.hb.withOwned(out)
	}
	t.push(acp.MethodSessionUpdate, out)
}

// maxAnswerText bounds an answer's text as streamed and kept for
// recover: what a bridge reads of one, JSON-escaped.
const maxAnswerText = 16 << 20

// keptCutNote ends an answer cut at maxAnswerText, saying why.
const keptCutNote = "\n\n[The answer was cut here: it passed 16 MiB, the most a chat's bridge reads of one.]"

// chunkOverhead is what one agent_message_chunk's notification adds to
// its text on the wire, counted generously.
const chunkOverhead = 160

// keep counts chunk into the answer's text, streamed and kept should its
// bridge go, up to maxAnswerText on the wire: the chunk that passes it
// is cut, at a character's start, and ends with keptCutNote (cut), and
// none after is sent or kept (ok false). t.mu is held.
func (t *turn) keep(chunk string) (sent string, cut, ok bool) {
	if t.cut {
		return "", false, false
	}
	cost := jsonx.StringLen(chunk) + chunkOverhead
	room := maxAnswerText - t.wire - jsonx.StringLen(keptCutNote) - chunkOverhead
	if cost <= room {
		t.wire += cost
		t.text.WriteString(chunk)
		return chunk, false, true
	}
	sent = jsonx.Fit(chunk, room-chunkOverhead) + keptCutNote
	t.wire += jsonx.StringLen(sent) + chunkOverhead
	t.text.WriteString(sent)
	t.cut = true
	return sent, true, true
}

// cutChunk is an agent_message_chunk's params with its text made text,
// its update's other members as they came.
func cutChunk(params json.RawMessage, text string) []byte {
	var p map[string]json.RawMessage
	json.Unmarshal(params, &p)
	var u map[string]json.RawMessage
	json.Unmarshal(p["update"], &u)
	var c map[string]json.RawMessage
	json.Unmarshal(u["content"], &c)
	if c == nil {
		c = map[string]json.RawMessage{}
	}
	c["text"] = jsonx.AppendString(nil, text)
	if u == nil {
		u = map[string]json.RawMessage{}
	}
	u["content"], _ = json.Marshal(c)
	if p == nil {
		p = map[string]json.RawMessage{}
	}
	p["update"], _ = json.Marshal(u)
	out, _ := json.Marshal(p)
	return out
}

// apart says whether a chunk of messageID begins another message of an
// answer that has text already: the harness marks its chunks with
// messageIds (ACP's ContentChunk), and this one names another than the
// last chunk did. A chunk with none is never set apart.
func (t *turn) apart(messageID string) bool {
	if messageID == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	last := t.msgID
	t.msgID = messageID
	return last != "" && last != messageID && t.text.Len() > 0
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

// cancel sends the harness session/cancel of the turn's session, once
// whoever asks (the bridge, the deadline, the hub giving up on it); the
// permissions it asks from then on are answered cancelled.
func (t *turn) cancel() {
	if t.cancelled.Swap(true) {
		return
	}
	p, _ := json.Marshal(map[string]string{"sessionId": t.session})
	t.h.conn.Notify(context.Background(), acp.MethodSessionCancel, json.RawMessage(p))
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
