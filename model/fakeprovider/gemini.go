package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/lnk-dev/link/model/scripted"
)

// geminiAPI is Google's Gemini API: POST
// /v1beta/models/{model}:generateContent, :streamGenerateContent (SSE with
// ?alt=sse, else a JSON array), :countTokens, and GET /v1beta/models.
type geminiAPI struct {
	s      *Server
	model  string // from the path
	method string // generateContent, streamGenerateContent, countTokens, list
	sse    bool
	bad    string // why the path is not one it answers
}

func newGeminiAPI(s *Server, httpMethod, path string) *geminiAPI {
	a := &geminiAPI{s: s}
	rest := strings.TrimPrefix(strings.TrimPrefix(path, "/v1beta"), "/v1")
	rest = strings.TrimPrefix(rest, "/models")
	switch {
	case rest == "" && httpMethod == http.MethodGet:
		a.method = "list"
	case strings.HasPrefix(rest, "/") && httpMethod == http.MethodPost:
		a.model, a.method, _ = strings.Cut(rest[1:], ":")
		switch a.method {
		case "generateContent", "streamGenerateContent", "countTokens":
		default:
			a.bad = fmt.Sprintf("method %q is not found for model %q", a.method, a.model)
		}
	default:
		a.bad = fmt.Sprintf("%s %s is not found", httpMethod, path)
	}
	return a
}

type geminiContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text    *string         `json:"text"`
		Thought bool            `json:"thought"`
		Call    json.RawMessage `json:"functionCall"`
	} `json:"parts"`
}

type geminiRequest struct {
	Contents    []geminiContent `json:"contents"`
	System      *geminiContent  `json:"systemInstruction"`
	SystemSnake *geminiContent  `json:"system_instruction"`
	Tools       []geminiTool    `json:"tools"`
	Config      *geminiConfig   `json:"generationConfig"`
	ConfigSnake *geminiConfig   `json:"generation_config"`
	ToolConfig  json.RawMessage `json:"toolConfig"`
}

type geminiTool struct {
	Declarations []struct {
		Name string `json:"name"`
	} `json:"functionDeclarations"`
}

type geminiConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens"`
	MimeType        string          `json:"responseMimeType"`
	Schema          json.RawMessage `json:"responseSchema"`
	JSONSchema      json.RawMessage `json:"responseJsonSchema"`
}

// schema is the JSON schema the request asks its answer to follow, nil if
// none.
func (r geminiRequest) schema() json.RawMessage {
	c := r.Config
	if c == nil {
		c = r.ConfigSnake
	}
	if c == nil || c.MimeType != "application/json" {
		return nil
	}
	if len(c.JSONSchema) > 0 && string(c.JSONSchema) != "null" {
		return c.JSONSchema
	}
	if len(c.Schema) > 0 && string(c.Schema) != "null" {
		return c.Schema
	}
	return nil
}

func (a *geminiAPI) decode(r *Request) {
	r.Model = a.model
	r.Stream = a.method == "streamGenerateContent"
	if a.bad != "" || a.method == "list" {
		return
	}
	var req geminiRequest
	if err := unmarshal(r.Body, &req); err != nil {
		r.Err = err
		return
	}
	if a.method == "countTokens" {
		return
	}
	if len(req.Contents) == 0 {
		r.Err = fmt.Errorf("* GenerateContentRequest.contents: contents is not specified")
		return
	}
	sys := req.System
	if sys == nil {
		sys = req.SystemSnake
	}
	if sys != nil {
		r.System = geminiText(*sys)
	}
	for _, t := range req.Tools {
		for _, d := range t.Declarations {
			r.Tools = append(r.Tools, d.Name)
		}
	}
	if c := req.Config; c != nil {
		r.MaxTokens = c.MaxOutputTokens
	}
	if len(req.ToolConfig) > 0 {
		r.ToolChoice = string(compact(req.ToolConfig))
	}
	for i, c := range req.Contents {
		switch c.Role {
		case "", "user":
			if text := geminiText(c); text != "" {
				r.LastUserText = text
			}
		case "model", "function", "tool":
		default:
			r.Err = fmt.Errorf("* GenerateContentRequest.contents[%d].role: Please use a valid role: user, model", i)
			return
		}
	}
}

// geminiText joins a content's text parts that aren't thoughts.
func geminiText(c geminiContent) string {
	var ts []string
	for _, p := range c.Parts {
		if p.Text != nil && !p.Thought {
			ts = append(ts, *p.Text)
		}
	}
	return joinNonEmpty(ts...)
}

// auth takes the key as x-goog-api-key or as ?key=.
func (a *geminiAPI) auth(r *http.Request) string {
	if r.Header.Get("X-Goog-Api-Key") != "" || r.URL.Query().Get("key") != "" {
		return ""
	}
	return "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."
}

func (a *geminiAPI) fail(w http.ResponseWriter, status int, msg string) {
	if isJSONObject(msg) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(status)
		w.Write([]byte(msg))
		return
	}
	code := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
		404: "NOT_FOUND", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}[status]
	if code == "" {
		code = "INTERNAL"
	}
	writeJSON(w, status, obj{"error": obj{"code": status, "message": msg, "status": code}})
}

func (a *geminiAPI) serve(st *stream, r *Request) {
	if a.bad != "" {
		a.fail(st.w, http.StatusNotFound, a.bad)
		return
	}
	switch a.method {
	case "list":
		var ms []any
		for _, m := range a.s.modelList() {
			ms = append(ms, obj{"name": "models/" + m.Name, "displayName": m.Name, "inputTokenLimit": m.ContextLength,
				"outputTokenLimit": 8192, "supportedGenerationMethods": []string{"generateContent", "countTokens"}})
		}
		writeJSON(st.w, http.StatusOK, obj{"models": ms})
		return
	case "countTokens":
		writeJSON(st.w, http.StatusOK, obj{"totalTokens": max(1, len(r.Body)/4)})
		return
	}
	var req geminiRequest
	json.Unmarshal(r.Body, &req)
	var t Turn
	if s := req.schema(); s != nil {
		// A request for JSON by a schema (an agent's own check: who speaks
		// next, which model to route to) is answered from its schema.
		t = Turn{Text: string(marshal(fillSchema(s, 0)))}.fill(len(r.Body))
	} else {
		t = a.s.take(r)
	}
	if t.Status != 0 {
		a.fail(st.w, t.Status, t.ErrorBody)
		return
	}
	st.delay = t.Delay
	id := a.s.id("")
	chunk := func(parts []any, finish string, last bool) obj {
		cand := obj{"content": obj{"role": "model", "parts": parts}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		u := obj{"promptTokenCount": t.Usage.prompt()}
		if last {
			u["candidatesTokenCount"] = t.Usage.Out
			u["totalTokenCount"] = t.Usage.prompt() + t.Usage.Out
			if t.Usage.CacheRead != 0 {
				u["cachedContentTokenCount"] = t.Usage.CacheRead
			}
		} else {
			u["totalTokenCount"] = t.Usage.prompt()
		}
		return obj{"candidates": []any{cand}, "usageMetadata": u, "modelVersion": r.Model, "responseId": id}
	}
	var calls []any
	for _, c := range t.ToolCalls {
		fc := obj{"name": c.Name, "args": inputObject(c.Input)}
		if c.ID != "" {
			fc["id"] = c.ID
		}
		calls = append(calls, obj{"functionCall": fc})
	}
	if !r.Stream {
		if t.Hang {
			st.hang()
			return
		}
		var parts []any
		if t.Thinking != "" {
			parts = append(parts, obj{"text": t.Thinking, "thought": true})
		}
		if t.Text != "" {
			parts = append(parts, obj{"text": t.Text})
		}
		writeJSON(st.w, http.StatusOK, chunk(append(parts, calls...), geminiFinish(t.StopReason), true))
		return
	}
	// Without alt=sse, the stream is one JSON array, an item at a time.
	sse := strings.Contains(r.Query, "alt=sse")
	if sse {
		st.crlf = true
		st.start("text/event-stream")
	} else {
		st.start("application/json; charset=UTF-8")
	}
	if t.Hang {
		st.hang()
		return
	}
	var pieces [][]any
	for _, c := range scripted.Pieces(t.Thinking, textChunks) {
		pieces = append(pieces, []any{obj{"text": c, "thought": true}})
	}
	for _, c := range scripted.Pieces(t.Text, textChunks) {
		pieces = append(pieces, []any{obj{"text": c}})
	}
	if len(calls) > 0 {
		pieces = append(pieces, calls)
	}
	if len(pieces) == 0 {
		pieces = [][]any{{obj{"text": ""}}}
	}
	for i, p := range pieces {
		last := i == len(pieces)-1
		finish := ""
		if last {
			finish = geminiFinish(t.StopReason)
		}
		c := chunk(p, finish, last)
		var err error
		switch {
		case sse:
			err = st.event("", c)
		case i == 0:
			err = st.write(append([]byte("["), marshal(c)...))
		default:
			err = st.write(append([]byte(",\r\n"), marshal(c)...))
		}
		if err != nil {
			return
		}
	}
	if !sse {
		st.write([]byte("]"))
	}
}

func geminiFinish(stop string) string {
	switch stop {
	case stopMaxTokens:
		return "MAX_TOKENS"
	case stopRefusal:
		return "SAFETY"
	}
	return "STOP"
}

// fillSchema makes a value that follows a JSON schema (or Gemini's Schema,
// whose types are capitals): an enum's first value, empty strings, zeros,
// false, empty arrays, and every property of an object.
func fillSchema(raw json.RawMessage, depth int) any {
	var s struct {
		Type       json.RawMessage            `json:"type"`
		Enum       []json.RawMessage          `json:"enum"`
		Properties map[string]json.RawMessage `json:"properties"`
		AnyOf      []json.RawMessage          `json:"anyOf"`
	}
	if depth > 16 || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if len(s.AnyOf) > 0 {
		return fillSchema(s.AnyOf[0], depth+1)
	}
	var typ string
	if json.Unmarshal(s.Type, &typ) != nil {
		var types []string
		json.Unmarshal(s.Type, &types)
		if len(types) > 0 {
			typ = types[0]
		}
	}
	switch strings.ToLower(typ) {
	case "string":
		return ""
	case "number", "integer":
		return 0
	case "boolean":
		return false
	case "array":
		return []any{}
	case "null":
		return nil
	}
	if s.Properties == nil && strings.ToLower(typ) != "object" {
		return nil
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := obj{}
	for _, k := range keys {
		out[k] = fillSchema(s.Properties[k], depth+1)
	}
	return out
}
