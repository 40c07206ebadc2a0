package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/cmd/internal/agentlog"
	"github.com/lnk-dev/link/cmd/internal/drivers"
	"github.com/lnk-dev/link/cmd/internal/porthold"
	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/store"
	sendtool "github.com/lnk-dev/link/tools/send"
)

// How lnk agent chat and lnk agent chat send reach the agent: at an
// endpoint they are told of (--endpoint, or LNK_PORT's when it answers
// /health and a key is at hand), else through a Link Harness they start
// in their own process, on the agent's home and a key file made once
// there. Every message goes through the real endpoint either way: its
// own WebSocket, the proof first.

// defaultChatThread is the thread lnk agent chat talks in when none is
// said: Link's own connection, link:<name>.
const defaultChatThread = "link:chat"

// maxAnswerRead is how much of an answer a bridge reads: past it, the
// owner is told the agent failed.
const maxAnswerRead = 16 << 20

// chatOptions are the flags of lnk agent chat and lnk agent chat send.
type chatOptions struct {
	thread   string
	endpoint string
	keyFile  string
	home     string
	agent    string
	model    string
	wait     time.Duration // how long a steered message waits for its answer
	// settings are the drivers' settings the flags say (--gcs-bucket...),
	// for the store bridge lnk starts; nil for a command without them.
	settings map[string]*string
}

func (o *chatOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.thread, "thread", defaultChatThread, "the conversation, link:`NAME` (Link's own connection)")
	fs.DurationVar(&o.wait, "wait", 2*time.Minute, "how long a message that joined a running turn waits for that turn's answer")
	fs.StringVar(&o.home, "home", "", "the Link home `folder` (default $LNK_HOME, else the user's config folder/lnk)")
	fs.StringVar(&o.agent, "agent", "", "the agent's `name` (default $"+contract.EnvAgent+", else main)")
	fs.StringVar(&o.endpoint, "endpoint", "", "the agent's endpoint `URL` (http://127.0.0.1:18800/acp); default: $LNK_PORT's when it answers, else a Link Harness started here")
	fs.StringVar(&o.keyFile, "key-file", "", "the `file` holding the endpoint key (default $LNK_KEY_FILE, else the agent's endpoint.key under its home)")
	fs.StringVar(&o.model, "model", "", "the `model` of a harness started here (default $LNK_MODEL, else the agent's config.json's, else one the provider keys set choose)")
	groupFlags(fs, "The agent", "home", "agent")
	groupFlags(fs, "Reaching it", "endpoint", "key-file", "model")
}

// registerSettings registers the drivers' settings, for the store bridge
// a harness started here has beside it: lnk agent chat's and send's.
func (o *chatOptions) registerSettings(fs *pflag.FlagSet) {
	o.settings = registerSettings(fs)
}

// check refuses a thread that isn't Link's own connection's.
func (o *chatOptions) check() error {
	if err := contract.CheckThread(o.thread); err != nil {
		return err
	}
	if !strings.HasPrefix(o.thread, "link:") || o.thread == "link:" {
		return fmt.Errorf("thread %q: lnk agent chat talks in link:NAME, Link's own connection", o.thread)
	}
	if o.model != "" {
		if err := contract.CheckModel(o.model); err != nil {
			return err
		}
	}
	if o.wait <= 0 {
		return fmt.Errorf("--wait %v: it is a positive duration", o.wait)
	}
	return nil
}

// agentConn is how lnk reaches the agent: its endpoint and key, and the
// harness lnk started, when it did.
type agentConn struct {
	url   string
	key   []byte
	agent string
	paths store.Paths     // the agent's files here
	local *serve.Server   // nil when the endpoint is another process's
	tools []startedTool   // the tools started beside local (memory, run...)
	store *drivers.Beside // the store bridge beside local; nil for none
	mates *homeMates      // its teammates served here, stopped with it; nil for a teammate

	mu       sync.Mutex
	commands []acp.Command // the agent's, as it last listed them; nil before
	// closeLog closes the agent's log local writes to.
	closeLog func() error
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// connect finds the agent's endpoint, or starts a harness for it here,
// saying on status which it did and which model a harness started here
// runs on.
func connect(ctx context.Context, o chatOptions, env map[string]string, status io.Writer) (*agentConn, error) {
	if o.settings != nil {
		env = withSettings(env, o.settings)
	}
	home := firstOf(o.home, env["LNK_HOME"])
	if home == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil, fmt.Errorf("find the Link home: %w (say --home)", err)
		}
		home = filepath.Join(dir, "lnk")
	}
	agent := firstOf(o.agent, env[contract.EnvAgent], contract.DefaultAgent)
	p, err := store.For(home, agent)
	if err != nil {
		return nil, err
	}
	keyFile := firstOf(o.keyFile, env["LNK_KEY_FILE"])
	if o.endpoint != "" {
		path := firstOf(keyFile, p.KeyFile())
		key, err := contract.ReadKeyFile(path)
		if err != nil {
			return nil, fmt.Errorf("the key of %s: %w", o.endpoint, keyFileMissing(path, err))
		}
		return &agentConn{url: o.endpoint, key: key, agent: agent, paths: p}, nil
	}
	addr := "127.0.0.1:0"
	if v := env[contract.EnvPort]; v != "" {
		port, err := contract.Port(v)
		if err != nil {
			return nil, err
		}
		if healthy(ctx, port) {
			if key, err := contract.ReadKeyFile(firstOf(keyFile, p.KeyFile())); err == nil {
				url := contract.EndpointURL(port)
				fmt.Fprintf(status, "lnk: talking to agent %s at %s ($%s)\n", agent, url, contract.EnvPort)
				return &agentConn{url: url, key: key, agent: agent, paths: p}, nil
			}
			// Something answers there, but no key to it is at hand: start
			// one here, on a free port.
		} else {
			addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		}
	}
	return startLocal(ctx, o, env, home, p, addr, status)
}

// startLocal starts Link Harness for the agent in this process, its key
// made once under the agent's home.
func startLocal(ctx context.Context, o chatOptions, env map[string]string, home string, p store.Paths, addr string, status io.Writer) (*agentConn, error) {
	a, err := startAgent(ctx, o, env, home, p, addr, status)
	if err != nil {
		return nil, err
	}
	// Its teammates, the other agents under the home, are served here
	// once it messages them, until it closes.
	a.mates = matesAt(home, env, status)
	a.mates.serving(p.Agent, a)
	return a, nil
}

// startAgent starts Link Harness for the agent at p in this process, and
// its tools beside it: lnk agent chat's own agent, or a teammate of it.
func startAgent(ctx context.Context, o chatOptions, env map[string]string, home string, p store.Paths, addr string, status io.Writer) (*agentConn, error) {
	key, err := ensureKey(p.KeyFile())
	if err != nil {
		return nil, err
	}
	choice, err := chooseModel(ctx, p, o.model, env)
	if err != nil {
		return nil, err
	}
	choice.say(status, p.Agent)
	name := choice.harnessModel()
	// Errors are said on status; warnings and errors go to the agent's
	// log too, for lnk agent status.
	logger, closeLog := agentlog.Logger(p, status, slog.LevelError)
	// Link's tools beside it (memory, run...), each unless the
	// environment names one already.
	tools, env, err := startTools(ctx, home, p, env, logger)
	if err != nil {
		closeLog()
		return nil, err
	}
	// Its store bridge beside it, when its storage names a driver's
	// plugin; a conversation kept by another (its storage changed since)
	// by a child's.
	sb, err := startStore(ctx, p, key, env, logger)
	if err != nil {
		closeTools(tools)
		closeLog()
		return nil, err
	}
	srv, err := serve.Start(ctx, serve.Config{
		Home:       home,
		Agent:      p.Agent,
		Key:        key,
		Addr:       addr,
		Model:      name,
		Env:        env,
		Logger:     logger,
		Bridges:    storeBridges(sb),
		StoreChild: true,
	})
	if err != nil {
		closeStore(sb)
		closeTools(tools)
		closeLog()
		return nil, fmt.Errorf("start agent %s: %w", p.Agent, porthold.Explain(err, addrPort(addr), "say another $"+contract.EnvPort+", or unset it and lnk takes a free port"))
	}
	fmt.Fprintf(status, "lnk: started agent %s here (home %s, endpoint %s)\n", p.Agent, home, srv.URL())
	reachTools(tools, sendtool.Target{URL: srv.URL(), Key: key, Agent: p.Agent})
	sayTools(status, tools)
	sayStore(status, sb)
	return &agentConn{url: srv.URL(), key: key, agent: p.Agent, paths: p, local: srv, tools: tools, store: sb, closeLog: closeLog}, nil
}

// addrPort is host:port's port, 0 when it has none.
func addrPort(addr string) int {
	_, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	return n
}

// Close stops the harness lnk started, once its turns end.
func (a *agentConn) Close() error {
	if a.local == nil {
		return nil
	}
	err := a.local.Close()
	err = errors.Join(err, closeStore(a.store), closeTools(a.tools))
	if a.mates != nil {
		err = errors.Join(err, a.mates.Close())
	}
	return errors.Join(err, a.closeLog())
}

// healthy says whether an endpoint on the loopback at port answers
// /health.
func healthy(ctx context.Context, port int) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(port))+contract.HealthPath, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// ensureKey reads the key file at path, making it first (a random key,
// readable by its owner alone) when there is none. Two made at once
// agree: only the first write wins.
func ensureKey(path string) ([]byte, error) {
	if key, err := contract.ReadKeyFile(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("make the key file: %w", err)
	}
	var b [32]byte
	rand.Read(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return contract.ReadKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("make the key file: %w", err)
	}
	_, werr := f.WriteString(hex.EncodeToString(b[:]) + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return nil, fmt.Errorf("make the key file: %w", werr)
	}
	return contract.ReadKeyFile(path)
}

// dial opens one message's connection, reading messages up to limit: the
// proof first, then the upgrade.
func (a *agentConn) dial(ctx context.Context, limit int64) (*endpoint.ClientConn, error) {
	return endpoint.Dial(ctx, endpoint.DialOptions{URL: a.url, Key: a.key, Agent: a.agent, ReadLimit: limit})
}

// sink is told what an answer streams, as it comes.
type sink interface {
	chunk(text string)
	toolCall(id, title string)
	toolDone(id, status string)
}

// exchange is what came of one message.
type exchange struct {
	text    string // the answer as streamed
	stop    string
	steered bool // it joined a running turn, whose answer answers it
	// tooLong: the answer passed what a bridge reads, so the agent
	// failed; reading stopped there.
	tooLong bool
}

// errTooLong is an answer past maxAnswerRead.
var errTooLong = fmt.Errorf("the answer passed %d MiB, the most read of one", maxAnswerRead>>20)

// say sends text to thread on a connection of its own, telling out what
// streams, and waits for the turn's answer; an interrupt on intr
// meanwhile sends session/cancel, and the turn's answer is then the one
// it stopped with. Past maxAnswerRead it stops reading and says tooLong.
func (a *agentConn) say(ctx context.Context, thread, text string, out sink, intr <-chan os.Signal) (exchange, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn, err := a.dial(ctx, maxAnswerRead+1<<20)
	if err != nil {
		return exchange{}, err
	}
	var mu sync.Mutex
	var read int
	var over bool
	var got strings.Builder
	c := acp.NewClient(ctx, conn, func(method string, params json.RawMessage) {
		if method != acp.MethodSessionUpdate {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if over {
			return
		}
		if read += len(params); read > maxAnswerRead {
			over = true
			cancel()
			return
		}
		var n acp.Notification
		var u acp.Update
		if json.Unmarshal(params, &n) != nil || json.Unmarshal(n.Update, &u) != nil {
			return
		}
		shown := u.Meta == nil || u.Meta.Link.Activity == nil || *u.Meta.Link.Activity
		switch u.SessionUpdate {
		case acp.UpdateMessageChunk:
			if u.Content != nil {
				got.WriteString(u.Content.Text)
				out.chunk(u.Content.Text)
			}
		case acp.UpdateToolCall:
			if shown {
				out.toolCall(u.ToolCallID, u.Title)
			}
		case acp.UpdateToolCallUpdate:
			if shown && (u.Status == acp.ToolCompleted || u.Status == acp.ToolFailed) {
				out.toolDone(u.ToolCallID, u.Status)
			}
		case acp.UpdateAvailableCommands:
			if cmds, ok := listedCommands(params); ok {
				a.setCommands(cmds)
			}
		}
	})
	res, perr := func() (acp.PromptResult, error) {
		if _, err := c.Initialize(ctx); err != nil {
			return acp.PromptResult{}, err
		}
		if err := c.Resume(ctx, thread); err != nil {
			return acp.PromptResult{}, err
		}
		defer cancelOn(ctx, c, thread, intr)()
		return c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil)
	}()
	if perr != nil {
		conn.CloseNow()
	}
	cerr := c.Close()
	mu.Lock()
	defer mu.Unlock()
	if over || errors.Is(cerr, acp.ErrTooLong) {
		return exchange{text: got.String(), tooLong: true}, nil
	}
	if perr != nil {
		return exchange{text: got.String()}, fmt.Errorf("send to %s: %w", thread, perr)
	}
	return exchange{text: got.String(), stop: res.StopReason, steered: res.Steered()}, nil
}

// target is the agent's endpoint as tools/send reaches it.
func (a *agentConn) target() sendtool.Target {
	return sendtool.Target{URL: a.url, Key: a.key, Agent: a.agent}
}

// pending lists thread's pending answers, each with its id, leaving them
// pending (two-phase, every page: sendtool.Kept): letGo lets them go
// once shown.
func (a *agentConn) pending(ctx context.Context, thread string) ([]contract.RecoveredAnswer, error) {
	all, err := sendtool.Kept(ctx, a.target())
	if err != nil {
		return nil, err
	}
	var out []contract.RecoveredAnswer
	for _, k := range all {
		if k.Thread == thread {
			out = append(out, k)
		}
	}
	return out, nil
}

// letGo lets the answers with ids go, once shown.
func (a *agentConn) letGo(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := sendtool.Recover(ctx, a.target(), contract.RecoverParams{Done: ids})
	return err
}

// waitPending waits, up to wait, for the first pending answer of thread that
// isn't one of before: a steered message's, which the turn it joined
// keeps for it when it ends. ok is false when none came in time.
func (a *agentConn) waitPending(ctx context.Context, thread string, before map[string]bool, wait time.Duration) (k contract.RecoveredAnswer, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	pause := 50 * time.Millisecond
	for {
		all, err := a.pending(ctx, thread)
		if err != nil {
			if ctx.Err() != nil {
				return k, false, nil
			}
			return k, false, err
		}
		for _, k := range all {
			if !before[k.ID] {
				return k, true, nil
			}
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return k, false, nil
		case <-t.C:
		}
		pause = min(2*pause, time.Second)
	}
}
