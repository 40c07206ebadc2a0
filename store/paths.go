package store

import (
	"fmt"
	"path/filepath"

	"github.com/lnk-dev/link/contract"
)

// Paths names every file of one agent. It is the one function through
// which any path of an agent is had: nothing joins an agent's paths itself.
type Paths struct {
	Agent string
	Root  string // the agent's home: <home>/agents/<agent>
}

// For gives the paths of agent under the Link home folder.
func For(home, agent string) (Paths, error) {
	if err := contract.CheckAgentName(agent); err != nil {
		return Paths{}, err
	}
	if home == "" {
		return Paths{}, fmt.Errorf("paths of %s: no home folder", agent)
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return Paths{}, fmt.Errorf("paths of %s: %w", agent, err)
	}
	return Paths{Agent: agent, Root: filepath.Join(abs, "agents", agent)}, nil
}

// Config is the agent's settings, config.json.
func (p Paths) Config() string { return filepath.Join(p.Root, "config.json") }

// ToolLists is tool-lists.json, each tool's list of calls as last listed.
func (p Paths) ToolLists() string { return filepath.Join(p.Root, "tool-lists.json") }

// Instructions is the folder of the agent's instructions.
func (p Paths) Instructions() string { return filepath.Join(p.Root, "instructions") }

// Files is the agent's files folder, the workspace its tools work in.
func (p Paths) Files() string { return filepath.Join(p.Root, "files") }

// Notes is memory/notes.md, the notes its memory keeps.
func (p Paths) Notes() string { return filepath.Join(p.Root, "memory", "notes.md") }

// ToolSecret is <tool>/secret, the secret in the address the agent's
// tool server of that name (memory, run, file, scheduler) answers at,
// kept across its starts (tools/mcpserve KeepSecret), in the tool's own
// folder of the agent's home: never under files/, the workspace its
// sandbox exposes. tool is one of Link's names for its tools, never
// outside input.
func (p Paths) ToolSecret(tool string) string { return filepath.Join(p.Root, tool, "secret") }

// Skills is the folder of the agent's skills: a folder each, with its
// SKILL.md (the Agent Skills format).
func (p Paths) Skills() string { return filepath.Join(p.Root, "skills") }

// Chats is the folder of the agent's conversations.
func (p Paths) Chats() string { return filepath.Join(p.Root, "chats") }

// Conversation is the folder of one thread's conversation. A thread id the
// contract refuses names no folder.
func (p Paths) Conversation(thread string) (string, error) {
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return "", err
	}
	return filepath.Join(p.Root, "chats", name), nil
}

// ChatHistory is the messages lnk agent chat's owner typed at a terminal,
// for its line editor's history: one JSON object a line.
func (p Paths) ChatHistory() string { return filepath.Join(p.Root, "chat-history.jsonl") }

// ConversationFile is the path of the file name in thread's folder.
func (p Paths) ConversationFile(thread, name string) (string, error) {
	dir, err := p.Conversation(thread)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}
