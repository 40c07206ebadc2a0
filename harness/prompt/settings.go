package prompt

import (
	"fmt"
	"strings"

	"github.com/lnk-dev/link/store"
)

// The sections' names, as the spec's [instructions] table names them.
const (
	Base        = "base"        // Link's base, written for this harness
	Model       = "model"       // the model's own instructions
	Tools       = "tools"       // what the tools say of themselves
	Environment = "environment" // the files folder and the connections
	Repository  = "repository"  // AGENTS.md, else CLAUDE.md, one per folder
	Skills      = "skills"      // each skill's name and description
	Persona     = "persona"     // who the agent is
	Owner       = "owner"       // who its owner is
	Instruction = "instruction" // the owner's standing instructions
	Notes       = "notes"       // memory/notes.md
	Now         = "now"         // where now is
)

// Order is the sections in the order they are composed: what changes
// least first, so a provider's cache holds up to the first that changed.
var Order = []string{Base, Model, Tools, Environment, Repository, Skills, Persona, Owner, Instruction, Notes, Now}

// None, as a section's file, leaves the section out.
const None = "none"

// ModelPlaceholder, in the model section's file, is the model's name as
// Link names it (anthropic/claude-opus-5-5).
const ModelPlaceholder = "{model}"

// Source is where one section comes from and how large it may be.
type Source struct {
	// File replaces the section's own words with a file of the agent's,
	// named from its home (instructions/base.md); None leaves the section
	// out; "" is the section's own source.
	File string
	// Max is the section's most, in bytes; 0 is its default.
	Max int
	// Depth is the repository's alone: how many levels of folders are
	// read, the files folder the first; 0 is DefaultDepth.
	Depth int
}

// Settings are the spec's [instructions]: each section's source and most,
// by name. A section not named keeps its defaults.
type Settings map[string]Source

// Defaults.
const (
	// MaxToolText is the most of one tool's own instructions.
	MaxToolText = 2 << 10
	// DefaultDepth is the repository's levels of folders: the files
	// folder and its subfolders.
	DefaultDepth = 2
	// MaxDepth bounds the repository's levels.
	MaxDepth = 4
	// MaxMost bounds any section's most.
	MaxMost = 1 << 20
)

// defaultMax is each section's most when the settings name none. The
// notes are held small (Link Memory refuses a note past 4 KB), since
// they're in every prompt.
var defaultMax = map[string]int{
	Base:        16 << 10,
	Model:       16 << 10,
	Tools:       32 << 10,
	Environment: 2 << 10,
	Repository:  32 << 10,
	Skills:      8 << 10,
	Persona:     8 << 10,
	Owner:       8 << 10,
	Instruction: 16 << 10,
	Notes:       4 << 10,
	Now:         1 << 10,
}

// defaultFile is the file each section of an agent's own words reads.
var defaultFile = map[string]string{
	Model:       "instructions/models/" + ModelPlaceholder + "/instruction.md",
	Persona:     "instructions/persona.md",
	Owner:       "instructions/owner.md",
	Instruction: "instructions/instruction.md",
	Notes:       "memory/notes.md",
}

// Validate checks every source s names: a known section, a most from 0
// to MaxMost, a file that is None or a plain path inside the agent's
// home, a depth of the repository's alone, at most MaxDepth.
func (s Settings) Validate() error {
	for name, src := range s {
		if _, ok := defaultMax[name]; !ok {
			return fmt.Errorf("instructions: no section %q: one of %s", name, strings.Join(Order, ", "))
		}
		if src.Max < 0 || src.Max > MaxMost {
			return fmt.Errorf("instructions: %s: max %d is not from 0 to %d", name, src.Max, MaxMost)
		}
		if src.File != "" && src.File != None && store.CheckFileName(strings.ReplaceAll(src.File, ModelPlaceholder, "m")) != nil {
			return fmt.Errorf("instructions: %s: file %q is not a path inside the agent's home (relative, with /, no ..)", name, src.File)
		}
		if src.Depth != 0 && name != Repository {
			return fmt.Errorf("instructions: %s: depth is the repository's alone", name)
		}
		if src.Depth < 0 || src.Depth > MaxDepth {
			return fmt.Errorf("instructions: repository: depth %d is not from 1 to %d", src.Depth, MaxDepth)
		}
	}
	return nil
}

// source is the section name's source, defaults filled.
func (s Settings) source(name string) Source {
	src := s[name]
	if src.Max == 0 {
		src.Max = defaultMax[name]
	}
	if src.File == "" {
		src.File = defaultFile[name]
	}
	if name == Repository && src.Depth == 0 {
		src.Depth = DefaultDepth
	}
	return src
}
