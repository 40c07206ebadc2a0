package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// maxBody bounds a call's body: one event's line.
const maxBody = store.MaxLine + 1

// ServerConfig is what a store bridge serves, and with which key.
type ServerConfig struct {
	// Store is the driver the calls reach.
	Store store.Conversations
	// Key is the agent's key, which proves each call.
	Key []byte
	// Now is the clock calls' times are judged by; time.Now if nil.
	Now func() time.Time
	// Skew is how far a call's time may be from Now; MaxSkew if zero.
	Skew time.Duration
	// Logger says which calls were refused, and why, never with the key
	// or a proof; nothing is logged if nil.
	Logger *slog.Logger
	// ReadTimeout bounds how long a call's request may take to arrive,
	// its headers and then its body (read whole before its proof is
	// checked); DefaultTimeout if zero.
	ReadTimeout time.Duration
	// IdleTimeout bounds how long a connection waits for its next call;
	// DefaultIdle if zero.
	IdleTimeout time.Duration
}

// DefaultIdle is how long a connection waits for its next call, past
// the client's own keep (90 s), so the client lets it go first.
const DefaultIdle = 2 * time.Minute

// Validate says what of the config is missing.
func (c ServerConfig) Validate() error {
	if c.Store == nil {
		return errors.New("store bridge: no store")
	}
	if _, err := contract.ParseKey(c.Key); err != nil {
		return fmt.Errorf("store bridge: %w", err)
	}
	if c.Skew < 0 {
		return errors.New("store bridge: a negative skew")
	}
	if c.ReadTimeout < 0 || c.IdleTimeout < 0 {
		return errors.New("store bridge: a negative timeout")
	}
	return nil
}

// Server answers a store bridge's calls: an http.Handler.
type Server struct {
	store  store.Conversations
	verify *verifier
	log    *slog.Logger
	read   time.Duration // ReadTimeout
	idle   time.Duration // IdleTimeout
}

// NewServer makes the server of cfg.
func NewServer(cfg ServerConfig) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Skew == 0 {
		cfg.Skew = MaxSkew
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = DefaultTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdle
	}
	key := append([]byte(nil), cfg.Key...)
	return &Server{store: cfg.Store, verify: newVerifier(key, cfg.Now, cfg.Skew), log: cfg.Logger, read: cfg.ReadTimeout, idle: cfg.IdleTimeout}, nil
}

// Serve answers calls on ln until ctx ends, then lets the calls under way
// finish (for at most 5 seconds) and returns nil. Every read is bounded
// in time: a call's request within ReadTimeout, a connection's wait for
// its next within IdleTimeout.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: min(s.read, 10*time.Second),
		IdleTimeout:       s.idle,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("store bridge on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(stop)
	if errors.Is(err, context.DeadlineExceeded) {
		err = hs.Close()
	}
	<-done
	return err
}

// ServeHTTP answers one call: 401 for a proof that fails, else the
// driver's answer. The body is read within ReadTimeout of the call's
// start, and the connection's deadline cleared before the driver's call,
// which its own context bounds.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.read)) // fails only where no deadline can be set (not Serve's)
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil { // the caller went, or was too slow: the deadline stays, for the rest of its body
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("the call's body didn't arrive within %v", s.read), http.StatusRequestTimeout)
		return
	}
	rc.SetReadDeadline(time.Time{})
	if len(body) > maxBody {
		http.Error(w, "", http.StatusRequestEntityTooLarge)
		return
	}
	if !s.verify.verify(r.Header, r.Method, r.RequestURI, body) {
		s.log.Info("store bridge refused a call", "method", r.Method, "path", r.URL.Path)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	c, err := decode(r.Method, r.RequestURI, body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.answer(r.Context(), w, c); err != nil {
		s.fail(w, r, err)
	}
}

// answer makes the driver's call and writes its answer; an error is
// written by the caller, only when nothing was.
func (s *Server) answer(ctx context.Context, w http.ResponseWriter, c call) error {
	switch c.path {
	case pathPing:
	case pathAppend:
		if err := s.append(ctx, c.thread, c.event); err != nil {
			return err
		}
	case pathRead, pathLatest:
		var es []store.Event
		var err error
		if c.path == pathRead {
			es, err = s.store.Read(ctx, c.thread, c.from)
		} else {
			es, err = store.Latest(ctx, s.store, c.thread, c.n)
		}
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/jsonl")
		if err := writeLines(w, es); err != nil {
			s.log.Info("store bridge answer cut short", "path", c.path, "thread", c.thread, "err", err)
		}
		return nil
	case pathLease:
		l, err := s.store.Lease(ctx, c.thread, c.holder, c.ttl)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json")
		return json.NewEncoder(w).Encode(l)
	case pathRelease:
		if err := s.store.Release(ctx, c.thread, c.holder); err != nil {
			return err
		}
	case pathTools, pathNarrow:
		return s.tools(ctx, w, c) // tools.go
	case pathForget:
		f, ok := s.store.(store.Forgetter)
		if !ok {
			return fmt.Errorf("forget %s: %w", c.thread, errors.ErrUnsupported)
		}
		if err := f.Forget(ctx, c.thread); err != nil {
			return err
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// append appends e, and takes a number already written whose event is
// e, byte for byte, as success: the same append sent again after its
// answer was lost.
func (s *Server) append(ctx context.Context, thread string, e store.Event) error {
	err := s.store.Append(ctx, thread, e)
	if !errors.Is(err, store.ErrSeqTaken) {
		return err
	}
	got, rerr := s.store.Read(ctx, thread, e.Seq)
	if rerr != nil || len(got) == 0 || got[0].Seq != e.Seq {
		return err
	}
	if same, serr := sameLine(got[0], e); serr != nil || !same {
		return err
	}
	return nil
}

// sameLine says whether two events have the same line, their times
// compared in UTC, as a driver may keep them.
func sameLine(a, b store.Event) (bool, error) {
	la, err := store.MarshalLine(store.InUTC(a))
	if err != nil {
		return false, err
	}
	lb, err := store.MarshalLine(store.InUTC(b))
	if err != nil {
		return false, err
	}
	return string(la) == string(lb), nil
}

// fail writes err's code, status and words, the code as the client of r
// reads it (codeNoToolsV1).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, status := errorCode(err)
	if code == codeNoTools && !readsWire2(r.Header) {
		code = codeNoToolsV1
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(errorBody{Code: code, Error: err.Error()})
}
