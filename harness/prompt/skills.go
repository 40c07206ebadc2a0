package prompt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/lnk-dev/link/internal/frontmatter"
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
		if !e.Dir || e.Symlink || strings.HasPrefix(e.Name, ".") {
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
	if fi.Symlink {
		return skill{}, fmt.Errorf("SKILL.md %w", store.ErrSymlink)
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
	fm, err := frontmatter.Read(string(b))
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

// truncate holds s to n bytes for an error.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
