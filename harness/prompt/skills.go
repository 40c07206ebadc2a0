package prompt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/lnk-dev/link/store"
)

// The Agent Skills format's bounds, and ours on reading it.
const (
	// SkillsFolder is the folder of the agent's skills in its home: a
	// folder each, with its SKILL.md.
	SkillsFolder = "skills"
	// maxSkills bounds the skills listed of one agent.
	maxSkills = 256
	// maxSkillFile bounds what is read of a SKILL.md for its front
	// matter: the name and description come first.
	maxSkillFile = 16 << 10
	// maxSkillName and maxSkillDescription are the format's most, in
	// characters.
	maxSkillName        = 64
	maxSkillDescription = 1024
)

// skill is one skill as its SKILL.md last read, kept until it changes.
type skill struct {
	size        int64
	mod         time.Time
	description string // "" when it is left out
	err         error  // why it is left out
}

// skillList is the skills section: each skill's name and description,
// sorted by name; a skill whose front matter lacks either, or names
// another, is left out; past max, whole skills are left out (list). Each SKILL.md is looked at (a stat) at each turn and read
// again only when it changed.
func (c pass) skillList(ctx context.Context, agent string, max int, p *Prompt) (string, error) {
	entries, err := c.files.ReadDir(ctx, agent, SkillsFolder, maxSkills)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	seen := make(map[string]bool, len(entries))
	var lines []string
	for _, e := range entries {
		if !e.Dir || e.Link || strings.HasPrefix(e.Name, ".") {
			continue
		}
		seen[e.Name] = true
		s, err := c.skill(ctx, agent, e.Name)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			p.Problems = append(p.Problems, fmt.Errorf("skill %s: %w", e.Name, err))
			continue
		}
		if s.description != "" {
			lines = append(lines, "- "+e.Name+": "+s.description)
		}
	}
	c.forgetSkills(agent, seen)
	return list(skillsIntro, "\n", lines, max, false), nil
}

// skillsIntro begins the list of skills.
const skillsIntro = "Each skill's instructions are in its SKILL.md, skills/<name>/SKILL.md in your home: read them when a task calls for the skill.\n\n"

// skill is the folder's skill, from what was kept while its SKILL.md is
// unchanged. A skill left out for its front matter is an error only the
// first time it is read.
func (c pass) skill(ctx context.Context, agent, folder string) (skill, error) {
	name := SkillsFolder + "/" + folder + "/SKILL.md"
	fi, err := c.files.Stat(ctx, agent, name)
	if errors.Is(err, fs.ErrNotExist) {
		return skill{}, nil // a folder with no SKILL.md is no skill
	}
	if err != nil {
		return skill{}, err
	}
	if fi.Link {
		return skill{}, fmt.Errorf("SKILL.md %w", store.ErrLink)
	}
	c.mu.Lock()
	kept, ok := c.skills[agent][folder]
	c.mu.Unlock()
	if ok && kept.size == fi.Size && kept.mod.Equal(fi.ModTime) {
		return kept, nil
	}
	b, err := c.files.ReadFile(ctx, agent, name, maxSkillFile)
	if err != nil && !errors.Is(err, store.ErrTooLarge) {
		return skill{}, err
	}
	s := skill{size: fi.Size, mod: fi.ModTime}
	s.description, s.err = skillDescription(folder, b)
	c.mu.Lock()
	if c.skills == nil {
		c.skills = map[string]map[string]skill{}
	}
	if c.skills[agent] == nil {
		c.skills[agent] = map[string]skill{}
	}
	c.skills[agent][folder] = s
	c.mu.Unlock()
	return s, s.err
}

// forgetSkills lets go what was kept of agent's skills no longer there.
func (c *Composer) forgetSkills(agent string, seen map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for folder := range c.skills[agent] {
		if !seen[folder] {
			delete(c.skills[agent], folder)
		}
	}
}

// skillDescription is the description of the skill in folder from its
// SKILL.md: its front matter must name it (name: folder) and describe it,
// each within the Agent Skills format's most. The description is given
// on one line.
func skillDescription(folder string, b []byte) (string, error) {
	fm, err := FrontMatter(string(b))
	if err != nil {
		return "", err
	}
	name, desc := fm["name"], strings.Join(strings.Fields(fm["description"]), " ")
	switch {
	case name == "":
		return "", errors.New("its front matter has no name")
	case name != folder:
		return "", fmt.Errorf("its front matter names %q, not its folder's name", truncate(name, 64))
	case !skillName(name):
		return "", fmt.Errorf("%q is not a skill's name: at most %d lowercase letters, digits and single hyphens", name, maxSkillName)
	case desc == "":
		return "", errors.New("its front matter has no description")
	case len([]rune(desc)) > maxSkillDescription:
		return "", fmt.Errorf("its description is over %d characters", maxSkillDescription)
	}
	return desc, nil
}

// skillName says whether s is a skill's name in the Agent Skills format:
// 1 to 64 lowercase letters, digits and hyphens, no hyphen first, last
// or twice in a row.
func skillName(s string) bool {
	if s == "" || len(s) > maxSkillName || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// FrontMatter reads the YAML front matter that opens a SKILL.md, between
// "---" lines, as the Agent Skills format writes it: its top-level keys
// and their string values, plain, quoted ('...' or "...") or a block
// (| or >, its lines indented). Nested values are skipped. A file with
// no front matter, or one never closed, is an error.
func FrontMatter(text string) (map[string]string, error) {
	text = strings.TrimPrefix(text, "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t") != "---" {
		return nil, errors.New("it has no front matter (a first line of ---)")
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, errors.New("its front matter is never closed (a line of ---)")
	}
	out := map[string]string{}
	body := lines[1:end]
	for i := 0; i < len(body); i++ {
		l := body[i]
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' {
			continue
		}
		key, val, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		val = strings.TrimSpace(stripComment(val))
		// The value's further lines: those indented below it.
		j := i + 1
		for j < len(body) && (body[j] == "" || body[j][0] == ' ' || body[j][0] == '\t') {
			j++
		}
		more := body[i+1 : j]
		i = j - 1
		switch {
		case strings.HasPrefix(val, "|") || strings.HasPrefix(val, ">"):
			out[key] = block(more, val[0] == '>')
		case strings.HasPrefix(val, `"`):
			out[key] = doubleQuoted(joinFolded(val, more))
		case strings.HasPrefix(val, "'"):
			out[key] = singleQuoted(joinFolded(val, more))
		default:
			out[key] = joinFolded(val, more)
		}
	}
	return out, nil
}

// stripComment drops a " #" comment from a plain value.
func stripComment(v string) string {
	t := strings.TrimSpace(v)
	if strings.HasPrefix(t, `"`) || strings.HasPrefix(t, "'") {
		return v
	}
	if i := strings.Index(v, " #"); i >= 0 {
		return v[:i]
	}
	return v
}

// joinFolded is a value and its further lines folded into one, as YAML
// folds a plain or quoted scalar over lines.
func joinFolded(first string, more []string) string {
	parts := []string{first}
	for _, m := range more {
		if t := strings.TrimSpace(m); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

// block is a block scalar's lines, their common indent taken off, joined
// by line breaks (|) or folded into one line (>).
func block(lines []string, folded bool) string {
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	var out []string
	for _, l := range lines {
		if len(l) >= indent && indent >= 0 {
			l = l[indent:]
		}
		out = append(out, strings.TrimRight(l, " \t"))
	}
	sep := "\n"
	if folded {
		sep = " "
	}
	return strings.TrimSpace(strings.Join(out, sep))
}

// doubleQuoted is a "..." scalar's text, its escapes read as Go reads
// them; one that doesn't read is taken between its quotes as it is.
func doubleQuoted(v string) string {
	if i := strings.LastIndexByte(v, '"'); i > 0 {
		v = v[:i+1]
	}
	if s, err := strconv.Unquote(v); err == nil {
		return s
	}
	return strings.Trim(v, `"`)
}

// singleQuoted is a '...' scalar's text, ” read as '.
func singleQuoted(v string) string {
	if i := strings.LastIndexByte(v, '\''); i > 0 {
		v = v[1:i]
	} else {
		v = strings.TrimPrefix(v, "'")
	}
	return strings.ReplaceAll(v, "''", "'")
}

// truncate holds s to n bytes for an error.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
