// Package memory is Link Memory: an agent's notes, a ranked full-text
// search over what was said and its files, and reads of its files,
// skills and conversations, all confined to the agent's home. The MCP
// server over it is memory/server, on the loopback at an address whose
// path holds a secret ($LNK_MEMORY); its index, SQLite FTS5, is
// memory/fts.
//
// What it reads of an agent's home:
//
//   - memory/notes.md, its notes: a line a note, each dated, at most
//     MaxNotes bytes in all. Remember and Forget change it under the
//     memory folder's lock, writing the whole file beside it and renaming
//     it in place, so a crash leaves the old file or the new, never half,
//     and two processes never lose each other's notes.
//   - files/, its workspace, and skills/, its skills (skills/<name>/SKILL.md,
//     the Agent Skills format), and instructions/.
//   - its conversations' copies for people: chats/<thread>/chat.md for a
//     log; for a conversation kept compact or by a driver, a copy of its
//     own made from the events (memory/copies/), as the harness reads them.
//
// The copy never holds a tool's call or answer, nor the message being
// answered, so a search never finds itself or what an earlier search
// returned.
//
// The index is derived: before each search it is checked against the
// modification time and size of every source that changed (on Linux,
// those the kernel's record of changes, inotify, names; elsewhere every
// source), changed sources read again, and made again from the sources
// when it is lost. Nothing runs between calls, and nothing is sent off the machine: embeddings, for a
// hybrid ranking, come only from a local runtime the user named.
package memory
