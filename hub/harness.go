package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// harness is one run of the harness's process, from its start to the end
// of its output.
type harness struct {
	hb     *Hub
	agreed chan struct{} // closed once it agreed on ACP, or its start failed
	conn   *acp.Conn
	p      *proc
	ended  chan struct{} // closed once its output ended and its turns failed

	// Set before agreed is closed.
	good     bool
	agreedAt time.Time
	caps     capabilities
	initErr  error // why it didn't agree on ACP, when it answered wrong or not in time
	// reread: it agreed, and is ended at once to start again, reading
	// Link's tools just written into its settings.
	reread bool

	mu       sync.Mutex
	why      string                     // how it ended, once ended
	open     map[string]bool            // sessions made or taken up in this run
	used     map[string]usedBy          // each open session's thread and when its last turn ended
	turns    map[string]*turn           // the running turn by session
	commands map[string]json.RawMessage // the latest availableCommands by session
	listed   map[string]chan struct{}   // closed when a session's commands come
	replays  map[string]*replay         // history being replayed for an export, by session
	quieting map[string]time.Time       // sessions just loaded: their last update's time (quiet)
	configs  map[string]json.RawMessage // the latest configOptions by session (keepConfig)
}

// capabilities are what the harness said it does, as the hub reads them.
type capabilities struct {
	load    bool            // session/load
	resume  bool            // session/resume
	mcpHTTP bool            // MCP servers over HTTP
	prompt  json.RawMessage // promptCapabilities, passed on to the bridge
	// threads: its sessions are Link's threads (Link Harness): each
	// thread's session is the thread itself, taken up by session/resume,
	// and it reads _meta.link and answers _link/recover itself.
	threads bool
	// state: it answers agent state itself (_meta.link.state).
	state bool
	list  bool // session/list
	close bool // session/close
}

func newHarness(hb *Hub) *harness {
	return &harness{hb: hb, agreed: make(chan struct{}), ended: make(chan struct{}), open: map[string]bool{}, used: map[string]usedBy{}, turns: map[string]*turn{}, commands: map[string]json.RawMessage{}, listed: map[string]chan struct{}{}, replays: map[string]*replay{}, quieting: map[string]time.Time{}, configs: map[string]json.RawMessage{}}
}

// ok says whether it agreed on ACP and has not ended; call it once agreed
// is closed.
func (h *harness) ok() bool {
	if !h.good {
		return false
	}
	select {
	case <-h.ended:
		return false
	default:
		return true
	}
}

// run starts the process, agrees on ACP with it, and serves it until its
// output ends; then its process group is ended and reaped.
func (h *harness) run() {
	hb := h.hb
	log := hb.cfg.Logger
	hb.prepareStart()
	p, err := startProc(hb.cfg.Command, hb.cfg.Env, hb.cfg.Dir, hb.cfg.Grace, log)
	if err != nil {
		h.why = err.Error()
		hb.ended(h, time.Time{}, err.Error())
		close(h.ended)
		close(h.agreed)
		return
	}
	f := acp.NewStdio(p.stdout, p.stdin, hb.cfg.MaxLine)
	f.SkipLong(h.tooLong)
	conn := acp.NewConn(f, h.handle)
	conn.SetLogger(log)
	conn.SendCancels() // a call the hub gives up on is cancelled ($/cancel_request)
	conn.SetIDs(&hb.ids)
	h.mu.Lock()
	h.p, h.conn = p, conn
	h.mu.Unlock()
	hb.mu.Lock()
	closed := hb.closed
	hb.mu.Unlock()
	if closed { // Close came while it started
		conn.Close()
	}
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		h.conn.Run(hb.life)
	}()
	go func() {
		// The leader's exit ends the run even while a process it left
		// holds the output open.
		select {
		case <-p.exited:
			h.conn.Close()
		case <-runDone:
		}
	}()
	h.initialize()
	<-runDone
	why := "its output ended: " + p.why()
	if h.initErr != nil { // the reason its output ended
		why = h.initErr.Error() + "; " + why
	}
	if h.reread {
		why = "ended to start again and read Link's tools in its settings"
	}
	h.mu.Lock()
	h.why = why
	h.mu.Unlock()
	var agreedAt time.Time
	if h.good || h.reread {
		agreedAt = h.agreedAt // no failed start
	}
	log.Info("harness ended", "why", why)
	hb.ended(h, agreedAt, why)
	close(h.ended)
	if !h.good {
		close(h.agreed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hb.cfg.Grace+10*time.Second)
	defer cancel()
	p.stop(ctx, hb.cfg.Grace)
}

// initialize agrees on ACP: on success agreed is closed; on failure the
// connection is closed and run reports it.
func (h *harness) initialize() {
	hb := h.hb
	ctx, cancel := context.WithTimeout(hb.life, hb.cfg.CallTimeout)
	defer cancel()
	raw, err := h.conn.Call(ctx, acp.MethodInitialize, map[string]any{
		"protocolVersion": acp.ProtocolVersion,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
		},
		"clientInfo": map[string]string{"name": "link-hub", "version": "1"},
	})
	if err == nil {
		err = h.readCaps(raw)
	} else if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("initialize: no answer within %s", hb.cfg.CallTimeout)
	} else {
		err = fmt.Errorf("initialize: %w", err)
	}
	if err != nil {
		hb.cfg.Logger.Warn("harness did not agree on ACP", "err", err)
		h.initErr = err
		h.conn.Close()
		return
	}
	h.agreedAt = hb.cfg.Now()
	if !hb.needsToolSettings(h.caps) {
		hb.toolsReach()
	} else if hb.writeToolSettings() {
		h.reread = true
		h.conn.Close()
		return
	}
	h.good = true
	close(h.agreed)
	if h.caps.close && (h.caps.resume || h.caps.load) && !h.caps.threads {
		go h.closeIdle()
	}
}

// readCaps reads initialize's answer.
func (h *harness) readCaps(raw json.RawMessage) error {
	var r struct {
		ProtocolVersion *int `json:"protocolVersion"`
		Caps            struct {
			Load    bool            `json:"loadSession"`
			Prompt  json.RawMessage `json:"promptCapabilities"`
			Session struct {
				Resume json.RawMessage `json:"resume"`
				List   json.RawMessage `json:"list"`
				Close  json.RawMessage `json:"close"`
			} `json:"sessionCapabilities"`
			MCP struct {
				HTTP bool `json:"http"`
			} `json:"mcpCapabilities"`
		} `json:"agentCapabilities"`
		Meta struct {
			Link struct {
				Threads bool `json:"threads"`
				State   bool `json:"state"`
			} `json:"link"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("initialize: its answer is no InitializeResponse: %w", err)
	}
	if r.ProtocolVersion == nil || *r.ProtocolVersion != acp.ProtocolVersion {
		return fmt.Errorf("initialize: it speaks no ACP version %d (answered %s)", acp.ProtocolVersion, truncate(string(raw), 120))
	}
	h.caps = capabilities{
		load:    r.Caps.Load,
		resume:  len(r.Caps.Session.Resume) > 0 && string(r.Caps.Session.Resume) != "null",
		mcpHTTP: r.Caps.MCP.HTTP,
		prompt:  r.Caps.Prompt,
		threads: r.Meta.Link.Threads,
		state:   r.Meta.Link.State,
		list:    len(r.Caps.Session.List) > 0 && string(r.Caps.Session.List) != "null",
		close:   len(r.Caps.Session.Close) > 0 && string(r.Caps.Session.Close) != "null",
	}
	return nil
}

// agreedThreads says whether it agreed on ACP, runs, and its sessions are
// Link's threads.
func (h *harness) agreedThreads() bool {
	select {
	case <-h.agreed:
		return h.ok() && h.caps.threads
	default:
		return false
	}
}

// shutdown ends the run: its connection is closed, so the run ends its
// process group.
func (h *harness) shutdown() {
	h.mu.Lock()
	conn := h.conn
	h.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}

// whyEnded is how the run ended, "" while it runs.
func (h *harness) whyEnded() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.why
}

// handle answers what the harness sends: its session updates go to the
// session's running turn, its permission requests are answered at once,
// anything else is refused or dropped, and logged.
func (h *harness) handle(ctx context.Context, r *acp.Request) {
	log := h.hb.cfg.Logger
	switch {
	case r.Method == acp.MethodSessionUpdate && r.IsNotification():
		h.update(r.Params)
	case r.Method == acp.MethodCancelRequest && r.IsNotification():
		// The hub answers each request of the harness's as it reads it, so
		// one the harness cancels was answered already: nothing is left.
		log.Debug("harness cancelled a request of its own, answered already", "params", truncate(string(r.Params), 120))
	case r.Method == methodRequestPermission && !r.IsNotification():
		o, session := answerPermission(r.Params, h.cancelled)
		log.Info("permission answered", "session", session, "outcome", o.Outcome.Outcome, "option", o.Outcome.OptionID)
		r.Reply(ctx, o)
	case r.IsNotification():
		log.Debug("harness notification dropped", "method", truncate(r.Method, 64))
	default:
		log.Warn("harness request refused", "method", truncate(r.Method, 64))
		r.Fail(ctx, acp.Errorf(acp.CodeMethodNotFound, "method %q not found: the hub answers permissions alone", truncate(r.Method, 64)))
	}
}

const methodRequestPermission = "session/request_permission"

// update routes one session/update: a command list is kept as its
// session's latest, and every update goes to its session's running turn,
// if any (so history replayed while a session is taken up reaches nobody).
func (h *harness) update(params json.RawMessage) {
	var p struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
		h.hb.cfg.Logger.Warn("harness sent a session/update with no session", "start", truncate(string(params), 120))
		return
	}
	// Each part is read on its own, so an update of a shape the hub
	// doesn't know still goes on as it came.
	var u struct {
		Kind      string          `json:"sessionUpdate"`
		Commands  json.RawMessage `json:"availableCommands"`
		Content   json.RawMessage `json:"content"`
		MessageID string          `json:"messageId"`
	}
	json.Unmarshal(p.Update, &u)
	var chunk string
	if u.Kind == acp.UpdateMessageChunk || u.Kind == updateUserChunk {
		var c struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(u.Content, &c) == nil && c.Type == "text" {
			chunk = c.Text
		}
	}
	if u.Kind == acp.UpdateConfigOption {
		h.keepConfig(p.SessionID, p.Update)
	}
	h.mu.Lock()
	if u.Kind == acp.UpdateAvailableCommands {
		h.commands[p.SessionID] = u.Commands
		if ch, ok := h.listed[p.SessionID]; ok {
			close(ch)
			delete(h.listed, p.SessionID)
		}
	}
	if _, ok := h.quieting[p.SessionID]; ok {
		h.quieting[p.SessionID] = time.Now()
	}
	t := h.turns[p.SessionID]
	r := h.replays[p.SessionID]
	h.mu.Unlock()
	switch {
	case t != nil:
		if u.Kind == updateUserChunk {
			chunk = ""
		}
		if chunk != "" && t.apart(u.MessageID) && !h.caps.threads && !strings.HasPrefix(chunk, "\n") {
			// A new message of the answer is set apart from the last, as
			// Link Harness sets apart a turn's rounds (itself, behind the
			// hub: its sessions are threads).
			chunk = "\n\n" + chunk
			params = cutChunk(params, chunk)
		}
		t.update(params, u.Kind == acp.UpdateAvailableCommands, chunk)
	case r != nil && chunk != "":
		role := contract.RoleAgent
		if u.Kind == updateUserChunk {
			role = contract.RoleUser
		}
		r.add(role, chunk, u.MessageID)
	}
}

// updateUserChunk is a session/update replaying a message of the user's.
const updateUserChunk = "user_message_chunk"

// cancelled says whether session's running turn was cancelled.
func (h *harness) cancelled(session string) bool {
	h.mu.Lock()
	t := h.turns[session]
	h.mu.Unlock()
	return t != nil && t.cancelled.Load()
}

// sessionIDPattern finds a message's session in its first bytes.
var sessionIDPattern = regexp.MustCompile(`"sessionId"\s*:\s*"((?:[^"\\]|\\.){1,256})"`)

// tooLong is told of a line past MaxLine: the turn of the session its
// first bytes name fails; the harness runs on.
func (h *harness) tooLong(prefix []byte) {
	log := h.hb.cfg.Logger
	m := sessionIDPattern.FindSubmatch(prefix)
	if m == nil {
		log.Warn("harness wrote a line past the limit, naming no session", "limit", h.hb.cfg.MaxLine, "start", truncate(string(prefix), 120))
		return
	}
	var session string
	json.Unmarshal(append(append([]byte{'"'}, m[1]...), '"'), &session)
	h.mu.Lock()
	t := h.turns[session]
	h.mu.Unlock()
	log.Warn("harness wrote a line past the limit", "limit", h.hb.cfg.MaxLine, "session", session)
	if t != nil {
		t.fail(fmt.Errorf("the harness wrote a message longer than %d bytes, which the hub does not carry", h.hb.cfg.MaxLine))
	}
}

// begin makes t session's running turn; finish lets it go.
func (h *harness) begin(session string, t *turn) {
	h.mu.Lock()
	h.turns[session] = t
	h.mu.Unlock()
}

func (h *harness) finish(session string, t *turn) {
	h.mu.Lock()
	if h.turns[session] == t {
		delete(h.turns, session)
	}
	if h.open[session] {
		h.used[session] = usedBy{t.thread, time.Now()}
	}
	h.mu.Unlock()
}

// call calls the harness, bounded by the call timeout.
func (h *harness) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, h.hb.cfg.CallTimeout)
	defer cancel()
	return h.conn.Call(ctx, method, params)
}

// errEnded says the harness ended while asked something.
var errEnded = errors.New("the harness stopped")

// endedErr is err, or why the harness ended when it did.
func (h *harness) endedErr(err error) error {
	select {
	case <-h.ended:
		return fmt.Errorf("%w (%s)", errEnded, h.whyEnded())
	default:
	}
	if errors.Is(err, acp.ErrClosed) {
		<-h.ended
		return fmt.Errorf("%w (%s)", errEnded, h.whyEnded())
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
