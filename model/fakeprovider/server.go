// Package fakeprovider is a model provider's HTTP server for tests and
// offline use, speaking the real wire formats closely enough that the
// official SDKs and real agents (Claude Code, Codex, Gemini CLI) take it
// for the real thing: Anthropic Messages (JSON and SSE, count_tokens),
// OpenAI Chat Completions and Responses (SSE), Gemini generateContent and
// streamGenerateContent, Ollama's /api/chat, /api/show and /api/tags, and
// the model lists.
//
// A test scripts the answers (Script) and reads back what was sent
// (Requests); with nothing scripted it echoes the last user text,
// labelled. Run serves one standalone.
package fakeprovider

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is a fake provider on a loopback port, answering in each
// provider's format with the turns scripted for it.
type Server struct {
	url     string
	ln      net.Listener
	srv     *http.Server
	closing chan struct{}
	once    sync.Once
	active  sync.WaitGroup

	mu     sync.Mutex
	script []Turn
	reqs   []Request
	models []Model
	ids    int
}

// Request is one request the server received, as sent and as decoded.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte

	// API is which format the request was: anthropic, chat, responses,
	// gemini, ollama; "" for the model lists and paths it doesn't know.
	API string
	// What the body said, in any format: the model, whether it streams, the
	// system prompt (its parts joined by newlines), the last user text, the
	// names of the tools offered (a function in one of the Responses API's
	// namespace tools as NAMESPACE.NAME, which a ToolCall's Name may
	// give back), the tool choice as sent, the answer's token bound. A
	// body that isn't the format's has Err set.
	Model        string
	Stream       bool
	System       string
	LastUserText string
	Tools        []string
	ToolChoice   string
	MaxTokens    int
	Err          error
	// Decoded is the body as JSON, nil if it isn't.
	Decoded map[string]any
}

// Model is a model the server says it has, for Ollama's /api/show and
// /api/tags and the model lists.
type Model struct {
	Name string
	// ContextLength is the window it was trained with
	// (model_info.<arch>.context_length).
	ContextLength int
	// NumCtx is the window Ollama runs it with (parameters num_ctx); 0
	// leaves it unsaid, as Ollama does when its Modelfile doesn't set it.
	NumCtx int
}

// defaultModel is the model the server has until one is added.
var defaultModel = Model{Name: "qwen3:8b", ContextLength: 40960}

// New starts a server on 127.0.0.1 at a free port, as httptest.NewServer
// does, and panics if it can't listen.
func New() *Server {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	return s
}

// Listen starts a server on addr.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fake provider: listen %s: %w", addr, err)
	}
	s := &Server{ln: ln, url: "http://" + ln.Addr().String(), closing: make(chan struct{})}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL is the server's address, http://127.0.0.1:port, the base URL of
// every format: Anthropic's SDK takes it as it is, OpenAI's with /v1,
// Gemini's as GOOGLE_GEMINI_BASE_URL, Ollama's as OLLAMA_HOST.
func (s *Server) URL() string { return s.url }

// Close stops the server, ends the answers it holds (Hang, Delay) and
// waits for them.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.srv.Close()
		s.active.Wait()
	})
}

// Script queues turns, taken in order by the requests of any endpoint
// that answers with a model's answer (a Gemini request for JSON by a
// schema is answered from its schema and takes none).
func (s *Server) Script(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, turns...)
}

// Pending is how many scripted turns are not yet taken.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// AddModel says the server has m, replacing the default model
// (qwen3:8b, trained with a 40960-token window, num_ctx unset) and any of
// the same name.
func (s *Server) AddModel(m Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.models {
		if s.models[i].Name == m.Name {
			s.models[i] = m
			return
		}
	}
	s.models = append(s.models, m)
}

// modelList is the models the server has.
func (s *Server) modelList() []Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.models) == 0 {
		return []Model{defaultModel}
	}
	return append([]Model(nil), s.models...)
}

// take gives the next scripted turn, or the default: the last user text,
// echoed and labelled.
func (s *Server) take(r *Request) Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.script) == 0 {
		return Turn{Text: EchoPrefix + r.LastUserText}.fill(len(r.Body))
	}
	t := s.script[0]
	s.script = s.script[1:]
	return t.fill(len(r.Body))
}

// EchoPrefix starts the default answer, given when nothing is scripted.
const EchoPrefix = "[fake provider] You said: "

// id makes an id unique in this server, in a provider's style.
func (s *Server) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%sfake%06d", prefix, s.ids)
}

// maxBody bounds a request's body: a prompt with its images.
const maxBody = 64 << 20

// ServeHTTP answers one request in the format its path names.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.active.Add(1)
	defer s.active.Done()
	select {
	case <-s.closing:
		http.Error(w, "closing", http.StatusServiceUnavailable)
		return
	default:
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	rec := Request{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body,
	}
	h := s.route(r, &rec)
	if h == nil {
		s.record(rec)
		writeJSON(w, http.StatusNotFound, obj{"error": obj{"message": "fake provider: no " + r.Method + " " + r.URL.Path, "type": "not_found_error"}})
		return
	}
	if err != nil {
		rec.Err = err
		s.record(rec)
		h.fail(w, http.StatusRequestEntityTooLarge, "request body too large")
		return
	}
	if r.Method == http.MethodPost {
		h.decode(&rec)
		rec.Decoded = decodeObject(body)
	}
	s.record(rec)
	if msg := h.auth(r); msg != "" {
		h.fail(w, http.StatusUnauthorized, msg)
		return
	}
	if rec.Err != nil {
		h.fail(w, http.StatusBadRequest, rec.Err.Error())
		return
	}
	st := &stream{w: w, ctx: r.Context(), closing: s.closing}
	h.serve(st, &rec)
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
}

// api is one wire format's handling of one request.
type api interface {
	// decode reads the body into r's decoded fields, or sets r.Err.
	decode(r *Request)
	// auth says what is wrong with the request's key, "" if nothing.
	auth(r *http.Request) string
	// fail answers an error in the format's shape.
	fail(w http.ResponseWriter, status int, msg string)
	// serve answers a request whose body decoded.
	serve(st *stream, r *Request)
}

// route finds the format of a request; nil if no format has its path.
func (s *Server) route(r *http.Request, rec *Request) api {
	p := r.URL.Path
	// OpenRouter's base URL is .../api/v1.
	if strings.HasPrefix(p, "/api/v1/") {
		p = p[len("/api"):]
	}
	post, get := r.Method == http.MethodPost, r.Method == http.MethodGet
	switch {
	case post && p == "/v1/messages":
		rec.API = "anthropic"
		return &anthropicAPI{s: s}
	case post && p == "/v1/messages/count_tokens":
		rec.API = "anthropic"
		return &anthropicAPI{s: s, count: true}
	case post && (p == "/v1/chat/completions" || p == "/chat/completions"):
		rec.API = "chat"
		return &chatAPI{s: s}
	case post && (p == "/v1/responses" || p == "/responses"):
		rec.API = "responses"
		return &responsesAPI{s: s}
	case get && p == "/v1/models":
		return &modelsAPI{s: s}
	case strings.HasPrefix(p, "/v1beta/models") || strings.HasPrefix(p, "/v1/models/"):
		rec.API = "gemini"
		return newGeminiAPI(s, r.Method, p)
	case strings.HasPrefix(p, "/api/") || (get && p == "/"):
		rec.API = "ollama"
		return newOllamaAPI(s, r.Method, p)
	}
	return nil
}

// decodeObject is a body as a JSON object, nil if it isn't one.
func decodeObject(body []byte) map[string]any {
	var m map[string]any
	dec := jsonDecoder(body)
	if dec.Decode(&m) != nil {
		return nil
	}
	return m
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(marshal(v))
}

// bearer is the token of an Authorization: Bearer header, "" if none.
func bearer(r *http.Request) string {
	a := r.Header.Get("Authorization")
	if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// Run serves a fake provider on addr until ctx ends, with nothing
// scripted, so every answer echoes what it was told; it writes to out the
// address and the environment that points each agent and SDK at it.
func Run(ctx context.Context, addr string, out io.Writer) error {
	s, err := Listen(addr)
	if err != nil {
		return err
	}
	defer s.Close()
	u := s.URL()
	fmt.Fprintf(out, "fake provider at %s\n", u)
	fmt.Fprintf(out, "ANTHROPIC_BASE_URL=%s ANTHROPIC_API_KEY=x\n", u)
	fmt.Fprintf(out, "OPENAI_BASE_URL=%s/v1 OPENAI_API_KEY=x\n", u)
	fmt.Fprintf(out, "OPENROUTER_BASE_URL=%s/api/v1 OPENROUTER_API_KEY=x\n", u)
	fmt.Fprintf(out, "GOOGLE_GEMINI_BASE_URL=%s GEMINI_API_KEY=x\n", u)
	fmt.Fprintf(out, "OLLAMA_HOST=%s\n", u)
	<-ctx.Done()
	return nil
}
