// Package agentspec reads an agent's spec, the one TOML file an owner
// writes its settings in, and gives them as the agent's config.json: the
// same tables, as JSON, which Link Harness and Link's tools read at each
// turn and call. It is what lnk-link-harness configure and lnk-acp
// configure read; the settings themselves, and the rules of their values,
// stay the readers' of config.json (cmd/internal/serve, tools/run,
// tools/scheduler). Every key it doesn't know and every value of the
// wrong type is refused, naming the key and its line.
package agentspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// MaxSpec bounds a spec file, as config.json is bounded.
const MaxSpec = 1 << 20

// Spec is an agent's spec: its tables as TOML names them, each field's
// json tag the key config.json gives it. A table or key the spec leaves
// out is left out of config.json too, so its reader's default holds.
//
//	id = "01HZX3K9QF"
//	[model]
//	name = "anthropic/claude-opus-5-5"
//	fallbacks = ["openai/gpt-6-luna"]
//	answer = 8192
//	[model.aliases]
//	fast = "anthropic/claude-haiku-5"
//	[storage]
//	conversations = "compact"
//	[window]
//	max = 100000
//	compact_at = 0.75
//	[instructions]
//	persona = "instructions/persona.md"
//	now = "none"
//	notes = { max = 4096 }
//	[tools]
//	timeout = 30
//	[tool.web]
//	max_bytes = 1048576
type Spec struct {
	ID           string                    `toml:"id" json:"id,omitempty"`
	Model        *Model                    `toml:"model" json:"model,omitempty"`
	Storage      *Storage                  `toml:"storage" json:"storage,omitempty"`
	Chat         *Chat                     `toml:"chat" json:"chat,omitempty"`
	Window       *Window                   `toml:"window" json:"window,omitempty"`
	Instructions map[string]any            `toml:"instructions" json:"instructions,omitempty"`
	Tools        map[string]any            `toml:"tools" json:"tools,omitempty"`
	Tool         map[string]map[string]any `toml:"tool" json:"tool,omitempty"`
	Connections  map[string]any            `toml:"connections" json:"connections,omitempty"`
	Run          *Run                      `toml:"run" json:"run,omitempty"`
	Scheduler    *Scheduler                `toml:"scheduler" json:"scheduler,omitempty"`
}

// Model is [model]: the model a conversation runs on, its aliases
// ([model.aliases]), the models tried in order when it fails past its
// retries, and the most tokens of an answer.
type Model struct {
	Name      string            `toml:"name" json:"name,omitempty"`
	Aliases   map[string]string `toml:"aliases" json:"aliases,omitempty"`
	Fallbacks []string          `toml:"fallbacks" json:"fallbacks,omitempty"`
	Answer    *int              `toml:"answer" json:"answer,omitempty"`
}

// Storage is [storage]: how a new conversation is kept (log, compact or
// a store driver's name).
type Storage struct {
	Conversations string `toml:"conversations" json:"conversations,omitempty"`
}

// Chat is [chat]: whether each tool call is shown to Link's bridge.
type Chat struct {
	Verbose *bool `toml:"verbose" json:"verbose,omitempty"`
}

// Window is [window]: how much of a conversation the model sees, and
// when what leaves is summarized. compact_at is a share of the room or
// "never".
type Window struct {
	Max       *int     `toml:"max" json:"max,omitempty"`
	CompactAt any      `toml:"compact_at" json:"compact_at,omitempty"`
	SaveNotes *bool    `toml:"save_notes" json:"save_notes,omitempty"`
	Answer    *float64 `toml:"answer" json:"answer,omitempty"`
	Margin    *float64 `toml:"margin" json:"margin,omitempty"`
	Unknown   *int     `toml:"unknown" json:"unknown,omitempty"`
}

// Run is [run], the run tool's: its commands' timeouts, network,
// sandbox, environment, folders read, output and limits, and its
// background commands ([run.limits], [run.background]).
type Run struct {
	Timeout    *int              `toml:"timeout" json:"timeout,omitempty"`
	MaxTimeout *int              `toml:"max_timeout" json:"max_timeout,omitempty"`
	Network    *bool             `toml:"network" json:"network,omitempty"`
	Sandbox    *string           `toml:"sandbox" json:"sandbox,omitempty"`
	Env        map[string]string `toml:"env" json:"env,omitempty"`
	Read       []string          `toml:"read" json:"read,omitempty"`
	Output     *int              `toml:"output" json:"output,omitempty"`
	Limits     *Limits           `toml:"limits" json:"limits,omitempty"`
	Background *Background       `toml:"background" json:"background,omitempty"`
}

// Limits is [run.limits]: each command's resource limits.
type Limits struct {
	Processes  *int   `toml:"processes" json:"processes,omitempty"`
	Memory     *int64 `toml:"memory" json:"memory,omitempty"`
	CPUSeconds *int   `toml:"cpu_seconds" json:"cpu_seconds,omitempty"`
	FileSize   *int64 `toml:"file_size" json:"file_size,omitempty"`
	OpenFiles  *int   `toml:"open_files" json:"open_files,omitempty"`
}

// Background is [run.background]: how many background commands run at
// once, and how many bytes of each one's latest output are kept.
type Background struct {
	MaxRunning *int   `toml:"max_running" json:"max_running,omitempty"`
	Output     *int64 `toml:"output" json:"output,omitempty"`
}

// Scheduler is [scheduler], the scheduler's: its zone and its bounds.
type Scheduler struct {
	Zone         string `toml:"zone" json:"zone,omitempty"`
	MaxSchedules *int   `toml:"max_schedules" json:"max_schedules,omitempty"`
	MaxTasks     *int   `toml:"max_tasks" json:"max_tasks,omitempty"`
}

// Error is a refusal of a spec: the line of the key it names (0 when
// the spec as a whole is refused), the key, and what is wrong.
type Error struct {
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Key != "":
		return fmt.Sprintf("line %d: %s: %s", e.Line, e.Key, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	case e.Key != "":
		return fmt.Sprintf("%s: %s", e.Key, e.Msg)
	}
	return e.Msg
}

// Parsed is a spec read: its tables, and where each key of it is, for a
// refusal of a value that names its key.
type Parsed struct {
	Spec  Spec
	lines map[string]int
}

// Line is the line of key (dotted, as config.json's readers name it:
// window.max, tool.web), else of the nearest table above it that the
// spec writes; 0 when the spec says none of it.
func (p *Parsed) Line(key string) int {
	for key != "" {
		if n, ok := p.lines[key]; ok {
			return n
		}
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// Refuse is a refusal of key's value, at its line; a message that starts
// with the key says it once.
func (p *Parsed) Refuse(key string, err error) *Error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, key); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, ": ")) {
		msg = strings.TrimPrefix(strings.TrimPrefix(rest, ":"), " ")
	}
	return &Error{Line: p.Line(key), Key: key, Msg: msg}
}

// Parse reads a spec: every key it doesn't know, every value of the
// wrong type, and a file that isn't TOML are refused, each by its line
// (errors.As *Error; several unknown keys are each said).
func Parse(b []byte) (*Parsed, error) {
	if len(b) > MaxSpec {
		return nil, &Error{Msg: fmt.Sprintf("the spec is over %d bytes", MaxSpec)}
	}
	var s Spec
	d := toml.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return nil, decodeError(err)
	}
	p := &Parsed{Spec: s, lines: keyLines(b)}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// decodeError is go-toml's refusal as the spec's: every unknown key by
// its line, else the one value of the wrong type, or the syntax, by its.
func decodeError(err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		var errs []error
		for _, e := range strict.Errors {
			row, _ := e.Position()
			errs = append(errs, &Error{Line: row, Key: dotted(e.Key()), Msg: "no such key in the spec (misspelled, or in the wrong table?)"})
		}
		return errors.Join(errs...)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		return &Error{Line: row, Key: dotted(de.Key()), Msg: typeMessage(de.Error())}
	}
	return &Error{Msg: err.Error()}
}

// typeMessage says go-toml's "cannot decode TOML string into struct
// field ... of type int" as "a string where an integer is wanted", its
// Go types said as TOML's; any other message as it is.
func typeMessage(msg string) string {
	msg = strings.TrimPrefix(msg, "toml: ")
	rest, ok := strings.CutPrefix(msg, "cannot decode TOML ")
	if !ok {
		return msg
	}
	got, _, _ := strings.Cut(rest, " ")
	want := rest
	if i := strings.LastIndex(rest, " of type "); i >= 0 {
		want = rest[i+len(" of type "):]
	} else if i := strings.Index(rest, " into "); i >= 0 {
		want = strings.TrimPrefix(rest[i+len(" into "):], "a Go value of type ")
	}
	words := map[string]string{
		"int": "an integer", "*int": "an integer", "int64": "an integer", "*int64": "an integer",
		"float64": "a number", "*float64": "a number", "bool": "true or false", "*bool": "true or false",
		"string": "a string", "*string": "a string", "[]string": "an array of strings",
	}
	w, ok := words[want]
	if !ok {
		switch {
		case strings.Contains(want, "map["), strings.Contains(want, "agentspec."), strings.HasPrefix(want, "struct"):
			w = "a table"
		default:
			w = want
		}
	}
	return fmt.Sprintf("a TOML %s where %s is wanted", got, w)
}

// check refuses what go-toml can't by the types alone: a compact_at
// neither a number nor a string, an [instructions] section neither a
// file's name nor its table, a number that JSON can't say (nan, inf).
func (p *Parsed) check() error {
	s := p.Spec
	if w := s.Window; w != nil {
		switch v := w.CompactAt.(type) {
		case nil, string:
		case int64:
			w.CompactAt = float64(v)
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return p.Refuse("window.compact_at", errors.New("not a number JSON can say"))
			}
		default:
			return p.Refuse("window.compact_at", errors.New(`a share of the room (a number) or "never"`))
		}
		for key, f := range map[string]*float64{"window.answer": w.Answer, "window.margin": w.Margin} {
			if f != nil && (math.IsNaN(*f) || math.IsInf(*f, 0)) {
				return p.Refuse(key, errors.New("not a number JSON can say"))
			}
		}
	}
	for _, name := range sortedKeys(s.Instructions) {
		if err := p.checkSection(name, s.Instructions[name]); err != nil {
			return err
		}
	}
	for table, m := range map[string]map[string]any{"tools": s.Tools, "connections": s.Connections} {
		if err := p.finite(table, m); err != nil {
			return err
		}
	}
	for name, t := range s.Tool {
		if err := p.finite("tool."+name, t); err != nil {
			return err
		}
	}
	return nil
}

// checkSection checks one [instructions] section: a file's name (or
// "none"), or a table of file, max and depth.
func (p *Parsed) checkSection(name string, v any) error {
	key := "instructions." + name
	switch v := v.(type) {
	case string:
		return nil
	case map[string]any:
		for _, k := range sortedKeys(v) {
			var ok bool
			switch k {
			case "file":
				_, ok = v[k].(string)
			case "max", "depth":
				_, ok = v[k].(int64)
			default:
				return p.Refuse(key+"."+k, errors.New("no such key of a section: file, max or depth"))
			}
			if !ok {
				want := "an integer"
				if k == "file" {
					want = "a string"
				}
				return p.Refuse(key+"."+k, fmt.Errorf("%s is wanted", want))
			}
		}
		return nil
	}
	return p.Refuse(key, errors.New(`a file's name, "none", or a table of file, max and depth`))
}

// finite refuses a number in a free table (a tool's own) that JSON can't
// say: nan or inf.
func (p *Parsed) finite(key string, v any) error {
	switch v := v.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return p.Refuse(key, errors.New("not a number JSON can say (nan, inf)"))
		}
	case map[string]any:
		for k, e := range v {
			if err := p.finite(key+"."+k, e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := p.finite(key, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// Config is the spec as the agent's config.json: its tables as JSON,
// indented, ending in a line break.
func (p *Parsed) Config() ([]byte, error) {
	b, err := json.MarshalIndent(p.Spec, "", "  ")
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("the spec as JSON: %v", err)}
	}
	return append(b, '\n'), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// dotted is a key as its parts joined by dots, a part that isn't a bare
// TOML key quoted.
func dotted(key []string) string {
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = k
		if !bare(k) {
			parts[i] = fmt.Sprintf("%q", k)
		}
	}
	return strings.Join(parts, ".")
}

func bare(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
