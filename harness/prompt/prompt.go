// Package prompt composes the system prompt of a turn of Link Harness
// from its sections, in order of how often each changes, least first:
// Link's base, the model's own instructions, what the tools say of
// themselves, the environment (at its start), the repository's, the
// skills, who the agent is and who its owner is, the owner's standing
// instructions, the agent's notes, and now. Each has a source and a most
// (Settings, the spec's [instructions]), and any can be replaced by a
// file of the agent's or left out.
//
// Everything is read through the store's Files seam, keyed by agent,
// never straight from a path, each read bounded. What changes every
// message (the date, the time, the connection, who's speaking) is not
// here: it heads each message, stored with it, so the prompt's bytes
// stay the same turn after turn and a provider's cache holds.
package prompt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
)

// Turn is what one turn's prompt is composed of beside the agent's files.
type Turn struct {
	Agent string
	// Model is the model the request goes to, as Link names it: a
	// fallback model is sent its own instructions in the first's place.
	Model string
	// Tools are the own instructions of the tools this turn offers (MCP's
	// initialize answer), each as kept beside its listing.
	Tools []model.ToolText
	// Environment is the agent's environment, read at its first prompt
	// here and kept: later ones are told the same.
	Environment Env
	// Zone names the machine's time zone, the one a message's header gives
	// its time in; "" or "Local" names none.
	Zone     string
	Settings Settings
}

// Env is where the agent works: the environment section's facts.
type Env struct {
	// FilesFolder is its files folder, the one its tools work in, as they
	// name it.
	FilesFolder string
	// Connections are the connections it is reached through (telegram).
	Connections []string
}

// Section is one section of a composed prompt.
type Section struct {
	Name string // as Order names it
	Text string
}

// Prompt is a turn's composed system prompt.
type Prompt struct {
	Sections []Section
	// Problems are what was left out and why: a file that is a link, a
	// skill without a description. The prompt goes on without them: one
	// bad file never costs the agent its turns.
	Problems []error
}

// System is the prompt as a request's sections, each of which may end
// with a cache breakpoint: every one is the same next turn unless a file
// or setting changed.
func (p Prompt) System() []model.Section {
	out := make([]model.Section, len(p.Sections))
	for i, s := range p.Sections {
		out[i] = model.Section{Text: s.Text, Cache: true}
	}
	return out
}

// Text is the prompt's sections joined by blank lines, as a provider
// without sections is sent it.
func (p Prompt) Text() string {
	texts := make([]string, len(p.Sections))
	for i, s := range p.Sections {
		texts[i] = s.Text
	}
	return strings.Join(texts, "\n\n")
}

// Composer composes prompts of any agent's, through Files. It keeps each
// skill's name and description until its SKILL.md changes, and each
// agent's environment as first told; it is safe for concurrent use.
type Composer struct {
	Files store.Files

	mu     sync.Mutex
	skills map[string]map[string]skill // agent, then folder
	env    map[string]string           // the environment section, by agent
}

// Looker is Files that can read a pass of names together, sharing what
// it looks at on the way (home.Misses: each folder looked at once in a
// pass, not once a name): each Compose reads through one Look.
type Looker interface {
	Look() store.Files
}

// pass is one Compose's reading: the composer, and the Files it reads
// through in that Compose.
type pass struct {
	*Composer
	files store.Files
}

// Compose composes t's prompt. Its only error is ctx's: a file that
// can't be read leaves its section out, said in Problems.
func (c *Composer) Compose(ctx context.Context, t Turn) (Prompt, error) {
	files := c.Files
	if l, ok := files.(Looker); ok {
		files = l.Look()
	}
	return pass{c, files}.compose(ctx, t)
}

// compose is Compose through c.files.
func (c pass) compose(ctx context.Context, t Turn) (Prompt, error) {
	var p Prompt
	for _, name := range Order {
		if err := ctx.Err(); err != nil {
			return Prompt{}, err
		}
		src := t.Settings.source(name)
		if src.File == None {
			continue
		}
		var text string
		var err error
		switch {
		case name == Model:
			text, err = c.model(ctx, t, src)
		case src.File != "":
			text, err = c.file(ctx, t.Agent, src.File, src.Max)
		default:
			text, err = c.own(ctx, name, t, src, &p)
		}
		if err != nil {
			if ctx.Err() != nil {
				return Prompt{}, ctx.Err()
			}
			p.Problems = append(p.Problems, fmt.Errorf("%s section: %w", name, err))
			continue
		}
		if text == "" {
			continue
		}
		if h := headings[name]; h != "" {
			text = h + "\n\n" + text
		}
		p.Sections = append(p.Sections, Section{Name: name, Text: text})
	}
	return p, nil
}

// headings head the sections that have one.
var headings = map[string]string{
	Tools:       "# Your tools",
	Environment: "# Your environment",
	Repository:  "# The repository's instructions",
	Skills:      "# Your skills",
	Persona:     "# Who you are",
	Owner:       "# Who your owner is",
	Instruction: "# Your owner's standing instructions",
	Notes:       "# Your notes",
	Now:         "# Now",
}

// own is a section's own words, where no file replaces them.
func (c pass) own(ctx context.Context, name string, t Turn, src Source, p *Prompt) (string, error) {
	switch name {
	case Base:
		return cut(BaseText, src.Max), nil
	case Tools:
		return tools(t.Tools, src.Max), nil
	case Environment:
		return c.environment(t.Agent, t.Environment, src.Max), nil
	case Repository:
		return c.repository(ctx, t.Agent, src, p)
	case Skills:
		return c.skillList(ctx, t.Agent, src.Max, p)
	case Now:
		return cut(now(t.Zone), src.Max), nil
	}
	return "", nil
}

// model is the model's own instructions: its file, the model's name put
// in place of {model}. A name that makes no path of the home has none.
func (c pass) model(ctx context.Context, t Turn, src Source) (string, error) {
	if t.Model == "" {
		return "", nil
	}
	name := strings.ReplaceAll(src.File, ModelPlaceholder, t.Model)
	if store.CheckFileName(name) != nil {
		return "", fmt.Errorf("model %q names no file of the agent's", t.Model)
	}
	return c.file(ctx, t.Agent, name, src.Max)
}

// file is the text of the agent's file name, trimmed, cut at max: "" for
// a file that is missing or empty.
func (c pass) file(ctx context.Context, agent, name string, max int) (string, error) {
	b, err := c.files.ReadFile(ctx, agent, name, max)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case errors.Is(err, store.ErrTooLarge):
		return hold(string(b), max, true), nil
	case err != nil:
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// CutNote ends a section cut at its most.
const CutNote = "[Cut here: the rest is past this section's most of %d bytes.]"

// cut is text trimmed and held to max bytes (hold).
func cut(text string, max int) string { return hold(text, max, false) }

// hold is text trimmed and held to max bytes: past it (or over, the
// text being the first max bytes of a longer one), cut at its last line
// break in the second half of the most, else its last space there, else
// at a character's start, and said so.
func hold(text string, max int, over bool) string {
	if !over {
		text = strings.TrimSpace(text)
		if len(text) <= max {
			return text
		}
	}
	n := min(max, len(text))
	if n < len(text) {
		for n > 0 && !startsRune(text[n]) {
			n--
		}
	} else if n > 0 {
		i := n - 1
		for i > 0 && !startsRune(text[i]) {
			i--
		}
		if !utf8.FullRuneInString(text[i:n]) {
			n = i // its last character cut short
		}
	}
	if i := strings.LastIndexByte(text[:n], '\n'); i >= max/2 {
		n = i
	} else if i := strings.LastIndexByte(text[:n], ' '); i >= max/2 {
		n = i
	}
	return strings.TrimSpace(strings.TrimSpace(text[:n]) + "\n" + fmt.Sprintf(CutNote, max))
}

func startsRune(b byte) bool { return b&0xC0 != 0x80 }

// tools is the tools section: each tool's own words under its name,
// sorted by name, each held to MaxToolText; past max, whole tools are
// left out (list).
func tools(texts []model.ToolText, max int) string {
	sorted := make([]model.ToolText, 0, len(texts))
	for _, t := range texts {
		if t.Tool != "" && strings.TrimSpace(t.Text) != "" {
			sorted = append(sorted, t)
		}
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Tool < sorted[j].Tool })
	entries := make([]string, len(sorted))
	for i, t := range sorted {
		entries[i] = "## " + t.Tool + "\n\n" + cut(t.Text, MaxToolText)
	}
	return list("", "\n\n", entries, max, false)
}

// LeftOutNote ends a list section some of whose entries were left out.
const LeftOutNote = "[%d more left out: past this section's most of %d bytes.]"

// list is a section of entries, after intro, each after sep: past max,
// the entries from the first that doesn't fit on are left out whole, and
// the section says how many. With cutFirst, a first entry that doesn't
// fit alone is cut to fit (hold) rather than left out.
func list(intro, sep string, entries []string, max int, cutFirst bool) string {
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(intro)
	for i, e := range entries {
		if i > 0 {
			e = sep + e
		}
		if b.Len()+len(e) <= max {
			b.WriteString(e)
			continue
		}
		if i == 0 && cutFirst {
			b.WriteString(hold(e, max-b.Len(), true))
			i++
		}
		if left := len(entries) - i; left > 0 {
			if b.Len() > len(intro) {
				b.WriteString("\n\n")
			}
			fmt.Fprintf(&b, LeftOutNote, left, max)
		}
		break
	}
	return b.String()
}

// environment is the environment section as first composed for agent.
func (c *Composer) environment(agent string, env Env, max int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if text, ok := c.env[agent]; ok {
		return text
	}
	var b strings.Builder
	if env.FilesFolder != "" {
		b.WriteString("Your files folder, where your tools work: " + env.FilesFolder + "\n")
	}
	if len(env.Connections) > 0 {
		conns := append([]string(nil), env.Connections...)
		sort.Strings(conns)
		b.WriteString("You are reached through: " + strings.Join(conns, ", ") + "\n")
	}
	text := cut(b.String(), max)
	if c.env == nil {
		c.env = map[string]string{}
	}
	c.env[agent] = text
	return text
}

// now is the now section: where now is read.
func now(zone string) string {
	s := "Now is the date and time in the header of the newest message"
	if zone != "" && zone != "Local" {
		s += ", in the machine's local time (" + zone + "), where your owner is."
	} else {
		s += ", in the machine's local time, where your owner is."
	}
	return s
}
