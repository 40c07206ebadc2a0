package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// Store reads and writes the harness's own session files, for the agent
// state of a harness that answers none itself (Config.Store): an
// adapter's, which knows where and how its harness keeps them.
type Store interface {
	// Export is what was said in session, as the harness's files keep
	// it; ok is false when they don't have it.
	Export(ctx context.Context, session string) (entries []contract.StateEntry, ok bool, err error)
	// Import writes entries as a new session of the harness's, one its
	// session/resume or session/load takes up, and returns its id.
	Import(ctx context.Context, entries []contract.StateEntry) (session string, err error)
}

// Preparer is a Store that readies the files of the sessions the hub
// keeps before each start of the harness, for a harness that would
// spoil them otherwise: Gemini CLI 0.61.0 both appends a fresh chat
// over a session's own file when it loads the session in the minute the
// file was named by, and deletes every file of a session at its next
// start when one of them (the fresh chat a load leaves) holds nothing
// said (hub/gemini). An error is logged, and the harness started all
// the same.
type Preparer interface {
	// PrepareStart readies the files of sessions (every session the hub
	// keeps for a thread); it is called before the harness's process
	// starts, so none of them is open.
	PrepareStart(ctx context.Context, sessions []string) error
}

// prepareStart has Config.Store ready the files of the sessions kept,
// when it is a Preparer, bounded by the call timeout.
func (hb *Hub) prepareStart() {
	p, ok := hb.cfg.Store.(Preparer)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(hb.life, hb.cfg.CallTimeout)
	defer cancel()
	if err := p.PrepareStart(ctx, hb.sessions.ids()); err != nil {
		hb.cfg.Logger.Warn("the store could not ready the sessions' files before the harness started", "err", err)
	}
}

// state answers _link/state/export and _link/state/import on a
// goroutine of its own: the params are checked at once, then the method
// waits for the turns running.
func (b *bridge) state(ctx context.Context, r *acp.Request) {
	b.mu.Lock()
	initialized := b.initialized
	b.mu.Unlock()
	if !initialized {
		r.Fail(ctx, acp.Errorf(acp.CodeInvalidRequest, "initialize comes first"))
		return
	}
	hb := b.hb
	var run func(context.Context) (any, error)
	if r.Method == contract.MethodStateExport {
		p, err := contract.ParseStateExportParams(r.Params)
		if err != nil {
			r.Fail(ctx, err)
			return
		}
		run = func(ctx context.Context) (any, error) { return hb.ExportState(ctx, p) }
	} else {
		doc, err := contract.ParseStateDocument(r.Params)
		if err != nil {
			r.Fail(ctx, err)
			return
		}
		run = func(ctx context.Context) (any, error) { return hb.ImportState(ctx, doc) }
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		// Once begun it runs to its end, its caller gone or not: an
		// import left half done would be worse.
		res, err := run(hb.life)
		wctx := context.WithoutCancel(ctx)
		if err != nil {
			// The harness's own refusal goes on as it came; a rule the
			// hub's side broke is invalid params; the rest says what failed.
			var re *contract.RuleError
			if _, theirs := err.(*acp.Error); !theirs && !errors.As(err, &re) {
				err = acp.Errorf(acp.CodeInternalError, "%v", err)
			}
			r.Fail(wctx, err)
			return
		}
		r.Reply(wctx, res)
	}()
}

// native says whether h answers agent state itself: a harness whose
// sessions are Link's threads (Link Harness) and says it does.
func native(h *harness) bool { return h.caps.threads && h.caps.state }

// ExportState gives the conversations of the threads p names (every
// thread the hub keeps a session of, when none), each under its thread,
// between turns. A harness that answers agent state itself is asked;
// otherwise each session is read by Config.Store, and one the store
// doesn't give is replayed through session/load (only those session/list
// gives, when the harness has it); a thread whose session can't be read
// either way is named in the document's Failed, the others given. A
// harness with neither gives none.
func (hb *Hub) ExportState(ctx context.Context, p contract.StateExportParams) (contract.StateDocument, error) {
	doc := contract.StateDocument{Version: contract.StateVersion, Conversations: []contract.StateConversation{}}
	release, err := hb.gate.hold(ctx, hb.cfg.StateWait, hb.cfg.StateQuiet)
	if err != nil {
		return doc, err
	}
	defer release()
	h, err := hb.readyFor(ctx)
	if err != nil {
		return doc, err
	}
	if native(h) {
		raw, err := h.callFor(ctx, contract.MethodStateExport, p, hb.cfg.StateWait)
		if err != nil {
			return doc, h.endedErr(err)
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return doc, fmt.Errorf("the harness's export is no state document: %w", err)
		}
		return doc, nil
	}
	if hb.cfg.Store == nil && !h.caps.load {
		return acp.NoStateExport(), nil
	}
	threads := p.Threads
	if len(threads) == 0 {
		threads = hb.sessions.all()
	}
	var listed map[string]string // session -> its cwd, when the harness lists them
	if h.caps.load && h.caps.list {
		if listed, err = h.listSessions(ctx); err != nil {
			return doc, err
		}
	}
	size := 0
	for _, thread := range threads {
		session := hb.sessions.get(thread)
		if session == "" {
			continue
		}
		var entries []contract.StateEntry
		ok := false
		if hb.cfg.Store != nil {
			if entries, ok, err = hb.cfg.Store.Export(ctx, session); err != nil {
				hb.exportFailed(&doc, thread, fmt.Errorf("its session's files: %w", err))
				continue
			}
		}
		if !ok && h.caps.load {
			cwd, had := listed[session]
			if listed != nil && !had {
				continue // gone from the harness
			}
			if entries, err = h.replay(ctx, thread, session, cwd); err != nil {
				hb.exportFailed(&doc, thread, err)
				continue
			}
		}
		entries = nonEmpty(entries)
		if len(entries) == 0 {
			continue
		}
		for _, e := range entries {
			size += len(e.Text) + 128
		}
		if size > contract.MaxStateDocument {
			return doc, &contract.RuleError{Field: "export", Rule: fmt.Sprintf("the conversations asked for hold more than a state document's %d bytes: export fewer threads at a time", contract.MaxStateDocument)}
		}
		doc.Conversations = append(doc.Conversations, contract.StateConversation{Thread: thread, Entries: entries})
	}
	return doc, nil
}

// exportFailed names thread in doc's failed, with why its conversation
// couldn't be read (scrubbed, at most 1,000 bytes), and logs it: one
// thread's failure doesn't fail the export of the others.
func (hb *Hub) exportFailed(doc *contract.StateDocument, thread string, err error) {
	hb.cfg.Logger.Warn("an export could not read a thread's conversation", "thread", thread, "err", err)
	if doc.Failed == nil {
		doc.Failed = map[string]string{}
	}
	doc.Failed[thread] = truncate(hb.scrub(err.Error()), 1000)
}

// ImportState takes doc's conversations in, between turns: each becomes
// a thread, under its old name when the hub keeps no session by it, else
// a new link:import-N, and the session made of it is kept as that
// thread's, so the next prompt there goes on where it was. A harness
// that answers agent state itself is asked; otherwise Config.Store
// writes each as a session of the harness's own, when the harness can
// take one up (resume or load). A harness with neither takes none.
func (hb *Hub) ImportState(ctx context.Context, doc contract.StateDocument) (contract.StateImportResult, error) {
	res := contract.StateImportResult{Conversations: []contract.ImportedConversation{}}
	release, err := hb.gate.hold(ctx, hb.cfg.StateWait, hb.cfg.StateQuiet)
	if err != nil {
		return res, err
	}
	defer release()
	h, err := hb.readyFor(ctx)
	if err != nil {
		return res, err
	}
	if native(h) {
		raw, err := h.callFor(ctx, contract.MethodStateImport, doc, hb.cfg.StateWait)
		if err != nil {
			return res, h.endedErr(err)
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return res, fmt.Errorf("the harness's import answered no import result: %w", err)
		}
		return res, nil
	}
	if hb.cfg.Store == nil || !h.caps.resume && !h.caps.load {
		return acp.NoStateImport(), nil
	}
	taken := map[string]bool{}
	for _, c := range doc.Conversations {
		thread := hb.freeThread(c.Thread, taken)
		session, err := hb.cfg.Store.Import(ctx, c.Entries)
		if err != nil {
			return res, fmt.Errorf("import %s: %w", c.Thread, err)
		}
		if err := hb.sessions.set(thread, session); err != nil {
			return res, fmt.Errorf("import %s: %w", c.Thread, err)
		}
		taken[thread] = true
		res.Conversations = append(res.Conversations, contract.ImportedConversation{From: c.Thread, Thread: thread})
	}
	return res, nil
}

// freeThread is the thread an import's conversation of old goes under:
// old when the hub keeps no session by it, else the first link:import-N
// that keeps none; taken are those this import gave already.
func (hb *Hub) freeThread(old string, taken map[string]bool) string {
	if !taken[old] && hb.sessions.get(old) == "" {
		return old
	}
	for n := 1; ; n++ {
		t := "link:import-" + strconv.Itoa(n)
		if !taken[t] && hb.sessions.get(t) == "" {
			return t
		}
	}
}

// readyFor is the running harness for a state method, started when none
// runs, waited for as long as a start may take (startBound).
func (hb *Hub) readyFor(ctx context.Context) (*harness, error) {
	ctx, cancel := context.WithTimeout(ctx, hb.startBound())
	defer cancel()
	return hb.ready(ctx)
}

// callFor calls the harness, bounded by the call timeout and wait more
// (a harness answering agent state itself waits for its own turns).
func (h *harness) callFor(ctx context.Context, method string, params any, wait time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, h.hb.cfg.CallTimeout+wait)
	defer cancel()
	return h.conn.Call(ctx, method, params)
}

// maxListPages bounds the pages of session/list an export follows.
const maxListPages = 10000

// listSessions is every session session/list gives, with its cwd.
func (h *harness) listSessions(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	var cursor *string
	for range maxListPages {
		p := map[string]any{}
		if cursor != nil {
			p["cursor"] = *cursor
		}
		raw, err := h.call(ctx, "session/list", p)
		if err != nil {
			return nil, fmt.Errorf("session/list: %w", h.endedErr(err))
		}
		var res struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
				Cwd       string `json:"cwd"`
			} `json:"sessions"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("session/list: answered %s: %w", truncate(string(raw), 120), err)
		}
		for _, s := range res.Sessions {
			out[s.SessionID] = s.Cwd
		}
		if res.NextCursor == nil || *res.NextCursor == "" {
			return out, nil
		}
		cursor = res.NextCursor
	}
	return out, nil
}

// replay is the history a harness replays while a session is loaded for
// an export: its message chunks, each run of one role (or one
// messageId) an entry.
type replay struct {
	mu      sync.Mutex // chunks come on the harness's reader while the export waits
	entries []contract.StateEntry
	id      string // the messageId of the last chunk, if it had one
	size    int
	done    bool // taken: later chunks are dropped
}

// add adds a chunk of role's text.
func (r *replay) add(role, text, messageID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || r.size+len(text) > contract.MaxStateDocument {
		return
	}
	r.size += len(text)
	n := len(r.entries)
	if n > 0 && r.entries[n-1].Role == role && (messageID == "" || messageID == r.id) {
		r.entries[n-1].Text += text
		return
	}
	r.id = messageID
	r.entries = append(r.entries, contract.StateEntry{Role: role, Text: text})
}

// replay loads session, thread's (in cwd, the hub's folder when empty),
// and returns the history the harness replayed while it did, and after
// its answer until the session went quiet (quiet). The session is then
// open as if a turn just ended in it: closed once idle (closeIdle).
func (h *harness) replay(ctx context.Context, thread, session, cwd string) ([]contract.StateEntry, error) {
	r := &replay{}
	h.mu.Lock()
	h.replays[session] = r
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.replays, session)
		h.mu.Unlock()
	}()
	p := h.sessionParams(session)
	if cwd != "" {
		p["cwd"] = cwd
	}
	if _, err := h.call(ctx, "session/load", p); err != nil {
		return nil, fmt.Errorf("session/load: %w", h.endedErr(err))
	}
	h.quiet(ctx, session) // what it replays after its answer
	h.mu.Lock()
	h.open[session] = true
	if _, ok := h.used[session]; !ok {
		h.used[session] = usedBy{thread, time.Now()}
	}
	h.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	return append([]contract.StateEntry(nil), r.entries...), nil
}

// nonEmpty is entries without those of no text.
func nonEmpty(entries []contract.StateEntry) []contract.StateEntry {
	out := entries[:0]
	for _, e := range entries {
		if e.Text != "" {
			out = append(out, e)
		}
	}
	return out
}

// all are the threads the file keeps a session of, in order.
func (f *sessionFile) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.threads))
	for t, s := range f.threads {
		if s != "" {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// ids are the sessions the file keeps, each once, in order.
func (f *sessionFile) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	out := make([]string, 0, len(f.threads))
	for _, s := range f.threads {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
