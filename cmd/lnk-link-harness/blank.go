package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/store/bridge"
	"github.com/lnk-dev/link/store/driver"
)

// bindLine is the one line a blank unit's control socket takes: the
// agent it is bound to (docs/agents.md, "Units started ahead").
type bindLine struct {
	Agent    string          `json:"agent"`
	ID       string          `json:"id,omitempty"`
	Home     string          `json:"home"`
	Port     int             `json:"port"`
	Settings json.RawMessage `json:"settings,omitempty"`
	Store    *bindStore      `json:"store,omitempty"`
}

// bindStore is the store bridge a bound unit keeps conversations through.
type bindStore struct {
	Driver string `json:"driver"`
	Socket string `json:"socket"`
	Key    string `json:"key"`
}

// Bounds of a control line.
const (
	maxBindLine  = 64 << 10
	bindReadTime = 10 * time.Second
)

// parseBind reads and checks a control line: one JSON object, no other
// key; an agent's name, an ID when it says one, an absolute home, a port
// from 1 to 65535, settings as config.json takes them, and a store
// bridge's driver, absolute socket and key when it names one.
func parseBind(b []byte) (bindLine, harness.Settings, error) {
	var l bindLine
	if len(b) > maxBindLine {
		return l, harness.Settings{}, fmt.Errorf("a control line is at most %d bytes", maxBindLine)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&l); err != nil {
		return l, harness.Settings{}, fmt.Errorf("not a binding's JSON object (agent, id, home, port, settings, store): %w", err)
	}
	if d.More() {
		return l, harness.Settings{}, errors.New("one JSON object a line")
	}
	if err := contract.CheckAgentName(l.Agent); err != nil {
		return l, harness.Settings{}, fmt.Errorf("agent: %w", err)
	}
	if l.ID != "" {
		if err := contract.CheckAgentID(l.ID); err != nil {
			return l, harness.Settings{}, fmt.Errorf("id: %w", err)
		}
	}
	if !filepath.IsAbs(l.Home) {
		return l, harness.Settings{}, errors.New("home is an absolute folder")
	}
	if l.Port < 1 || l.Port > 65535 {
		return l, harness.Settings{}, fmt.Errorf("port is 1 to 65535, not %d", l.Port)
	}
	settings := []byte("{}")
	if len(l.Settings) > 0 && string(l.Settings) != "null" {
		settings = l.Settings
	}
	set, err := serve.ParseSettings(settings, "")
	if err != nil {
		return l, harness.Settings{}, fmt.Errorf("settings: %w", err)
	}
	if s := l.Store; s != nil {
		if d, _ := driver.Lookup(s.Driver); driver.CheckName(s.Driver) != nil || d.InFolder() {
			return l, harness.Settings{}, errors.New("store: driver names a store bridge's driver (sqlite, gcs...)")
		}
		if !filepath.IsAbs(s.Socket) {
			return l, harness.Settings{}, errors.New("store: socket is an absolute path")
		}
		if _, err := contract.ParseKey([]byte(s.Key)); err != nil {
			return l, harness.Settings{}, fmt.Errorf("store: key: %w", err)
		}
		set.Conversations = s.Driver
	}
	return l, set, nil
}

// runBlank is serve --blank: a unit holding nothing of anyone's until one
// line on its control socket binds it to an agent; then it answers as
// that agent, with a key made for that binding alone, until its agent
// sleeps (or it is stopped). Bound once: every later line is refused.
func (m *Main) runBlank(ctx context.Context) error {
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ln, err := listenControl(m.Blank)
	if err != nil {
		return err
	}
	defer os.Remove(m.Blank)
	defer ln.Close()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	fmt.Fprintf(m.Stdout, "blank %s\n", m.Blank)
	close(m.ready)

	bound := make(chan *serve.Server, 1)
	var srv *serve.Server
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if s := m.control(ctx, c, srv != nil, logger); s != nil {
				srv = s
				bound <- s
			}
		}
	}()
	select {
	case <-ctx.Done():
		return nil
	case s := <-bound:
		return m.serveUntil(ctx, s, logger)
	}
}

// control answers one control connection: a bind from the socket's
// owner, the first, well formed, is done and answered with the endpoint
// and its key; anything else is refused, answered and logged.
func (m *Main) control(ctx context.Context, c net.Conn, bound bool, logger *slog.Logger) *serve.Server {
	defer c.Close()
	refuse := func(why string) *serve.Server {
		logger.LogAttrs(ctx, slog.LevelWarn, "control line refused", slog.String("why", why))
		b, _ := json.Marshal(map[string]string{"error": why})
		c.SetWriteDeadline(time.Now().Add(bindReadTime))
		c.Write(append(b, '\n'))
		return nil
	}
	if err := peerIsOwner(c); err != nil {
		return refuse(err.Error())
	}
	c.SetReadDeadline(time.Now().Add(bindReadTime))
	line, err := bufio.NewReaderSize(c, maxBindLine).ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return refuse(fmt.Sprintf("a control line is at most %d bytes", maxBindLine))
	}
	if err != nil {
		return refuse("no line: " + err.Error())
	}
	if bound {
		return refuse("bound already: a unit is bound once, never again")
	}
	l, set, err := parseBind(bytes.TrimSpace(line))
	if err != nil {
		return refuse(err.Error())
	}
	var keyb [32]byte
	rand.Read(keyb[:])
	key := []byte(hex.EncodeToString(keyb[:]))
	cfg := serve.Config{
		Home:       l.Home,
		Agent:      l.Agent,
		AgentID:    l.ID,
		Key:        key,
		Addr:       net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Port)),
		Model:      m.Model,
		Env:        m.Env,
		Settings:   &set,
		Logger:     logger.With(slog.String("agent", l.Agent)),
		SleepAfter: m.SleepAfter,
	}
	if m.Model != "" {
		cfg.Settings.Model = m.Model
	}
	if s := l.Store; s != nil {
		cfg.Bridges = map[string]bridge.Config{s.Driver: {Network: "unix", Address: s.Socket, Key: []byte(s.Key)}}
	}
	srv, err := serve.Start(ctx, cfg)
	if err != nil {
		return refuse("bind: " + err.Error())
	}
	logger.LogAttrs(ctx, slog.LevelInfo, "bound", slog.String("agent", l.Agent), slog.String("endpoint", srv.URL()))
	b, _ := json.Marshal(map[string]string{"endpoint": srv.URL(), "key": string(key)})
	c.SetWriteDeadline(time.Now().Add(bindReadTime))
	c.Write(append(b, '\n'))
	return srv
}

// listenControl listens on the control socket at path, readable and
// writable by its owner alone; a file already there is refused.
func listenControl(path string) (net.Listener, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("control socket %q: an absolute path", path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return ln, nil
}

// blankFlags checks serve's flags beside --blank: a unit holds no agent,
// home, key or port until it is bound, so the flags naming them are
// refused.
func (m *Main) blankFlags(fs *flag.FlagSet) error {
	return m.refuseFlags(fs, "the binding's with --blank", "agent", "agent-id", "key-file", "port", "agents", "stdio", "home", "store-child")
}
