// Package facts is what is known of each model, as data rather than code:
// its window and its longest answer. Link's file (facts.toml, shipped in
// the module and refreshed at every release) is under the user's
// (~/.lnk/model-facts.toml), which wins field by field; what a runtime on
// the machine says it runs a model with (Ollama's /api/show) comes
// between them; a model nobody described has no window, and the harness
// gives it the spec's [window] unknown.
package facts

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/lnk-dev/link/model"
)

//go:embed facts.toml
var linkFile []byte

// Model is what a file says of one model; a field left out (0) says
// nothing.
type Model struct {
	// Window is how many tokens the model takes in one request, its answer
	// included.
	Window int `toml:"window"`
	// Answer is the longest answer it writes, in tokens.
	Answer int `toml:"answer"`
}

// File is a facts file: models by name.
type File map[string]Model

// MaxFile bounds a facts file read.
const MaxFile = 1 << 20

// Parse reads a facts file: a TOML table per model, each with window and
// answer, positive. A key it doesn't know is refused, so a misspelt one
// isn't silently ignored.
func Parse(b []byte) (File, error) {
	if len(b) > MaxFile {
		return nil, fmt.Errorf("model facts: over %d bytes", MaxFile)
	}
	var f File
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&f)
	if err != nil {
		return nil, fmt.Errorf("model facts: %w", err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		return nil, fmt.Errorf("model facts: %s is not a fact (window, answer)", un[0])
	}
	for name, m := range f {
		if strings.TrimSpace(name) == "" {
			return nil, errors.New("model facts: a model without a name")
		}
		if m.Window < 0 || m.Answer < 0 {
			return nil, fmt.Errorf("model facts: %s: a window or answer is negative", name)
		}
	}
	return f, nil
}

var link = sync.OnceValue(func() File {
	f, err := Parse(linkFile)
	if err != nil {
		panic(err) // the module's own file; TestLinkFile reads it
	}
	return f
})

// Link is Link's own file.
func Link() File { return link() }

// ReadFile reads the facts file at path; a missing one says nothing.
func ReadFile(path string) (File, error) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, MaxFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Where each fact came from.
const (
	FromUser    = "yours"   // the user's file
	FromRuntime = "runtime" // a runtime on the machine (Ollama's /api/show)
	FromLink    = "Link's"  // Link's file
	FromUnknown = "unknown" // nobody described it: [window] unknown
)

// Facts are what is known of one model, and where each fact came from.
type Facts struct {
	Name       string
	Window     int
	WindowFrom string
	Answer     int // 0: nobody said
	AnswerFrom string
	// Runtime is what a runtime said, when one was asked and answered,
	// with the trained window it reported beside the one it runs.
	Runtime *Shown
}

// Shown is what a runtime says of a model it runs.
type Shown struct {
	Runtime string // "ollama"
	Trained int    // the window the model was trained with
	Runs    int    // the window the runtime runs it with (num_ctx)
	RunsWhy string // where Runs came from: the model's num_ctx, the runtime's setting, or its default
}

// Runtime is a runtime on the machine that can say how it runs a model.
// ok is false for a model it doesn't run (a name not its own).
type Runtime interface {
	Show(ctx context.Context, name string) (s Shown, ok bool, err error)
}

// Resolver finds a model's facts: the user's file first, then a runtime,
// then Link's, field by field. What a runtime said is kept for CacheFor.
type Resolver struct {
	User    File
	Link    File
	Runtime Runtime // nil: none asked
	// Unknown is the window of a model nobody described ([window]
	// unknown).
	Unknown  int
	CacheFor time.Duration // 0: a minute
	Now      func() time.Time

	mu    sync.Mutex
	shown map[string]shownAt
}

type shownAt struct {
	s   Shown
	ok  bool
	err error
	at  time.Time
}

// DefaultUnknown is the spec's [window] unknown.
const DefaultUnknown = 32768

// Resolve gives name's facts. A runtime that fails is passed over (its
// error returned beside the facts found without it), so a runtime down
// costs the window it would have said, never the turn.
func (r *Resolver) Resolve(ctx context.Context, name string) (Facts, error) {
	f := Facts{Name: name}
	user, link := r.User[name], r.Link[name]
	var rerr error
	var shown Shown
	var ran bool
	if user.Window == 0 && r.Runtime != nil {
		shown, ran, rerr = r.show(ctx, name)
		if ran {
			f.Runtime = &shown
		}
	}
	switch {
	case user.Window > 0:
		f.Window, f.WindowFrom = user.Window, FromUser
	case ran && shown.Runs > 0:
		f.Window, f.WindowFrom = shown.Runs, FromRuntime
	case link.Window > 0:
		f.Window, f.WindowFrom = link.Window, FromLink
	default:
		f.Window, f.WindowFrom = r.Unknown, FromUnknown
		if f.Window <= 0 {
			f.Window = DefaultUnknown
		}
	}
	switch {
	case user.Answer > 0:
		f.Answer, f.AnswerFrom = user.Answer, FromUser
	case link.Answer > 0:
		f.Answer, f.AnswerFrom = link.Answer, FromLink
	}
	if f.Answer > f.Window {
		f.Answer = f.Window
	}
	return f, rerr
}

func (r *Resolver) show(ctx context.Context, name string) (Shown, bool, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	every := r.CacheFor
	if every <= 0 {
		every = time.Minute
	}
	r.mu.Lock()
	if c, ok := r.shown[name]; ok && now().Sub(c.at) < every {
		r.mu.Unlock()
		return c.s, c.ok, c.err
	}
	r.mu.Unlock()
	s, ok, err := r.Runtime.Show(ctx, name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shown == nil {
		r.shown = map[string]shownAt{}
	}
	r.shown[name] = shownAt{s, ok, err, now()}
	return s, ok, err
}

// Names lists the models a file describes, sorted.
func (f File) Names() []string {
	out := make([]string, 0, len(f))
	for n := range f {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// UserFile is the user's facts file, ~/.lnk/model-facts.toml.
func UserFile() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("model facts: %w", err)
	}
	return filepath.Join(home, ".lnk", "model-facts.toml"), nil
}

// ForEnv is the resolver Link runs with: the user's file at user (read
// now; "" reads none), Ollama at OLLAMA_HOST of env (else its own port on
// this machine, as model.Resolve says) run with env's
// OLLAMA_CONTEXT_LENGTH, Link's file, and unknown for the rest.
func ForEnv(user string, env map[string]string, unknown int) (*Resolver, error) {
	r := &Resolver{Link: Link(), Unknown: unknown}
	if user != "" {
		f, err := ReadFile(user)
		if err != nil {
			return nil, err
		}
		r.User = f
	}
	route, err := model.Resolve("ollama/any", env)
	if err == nil {
		n, _ := strconv.Atoi(env["OLLAMA_CONTEXT_LENGTH"])
		r.Runtime = Ollama{BaseURL: route.BaseURL, ContextLength: max(n, 0)}
	}
	return r, nil
}
