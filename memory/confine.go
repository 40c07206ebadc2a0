package memory

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// The areas of the agent's home memory reads, each named as the calls
// name it: the first element of every path a call takes.
const (
	AreaFiles        = "files"
	AreaSkills       = "skills"
	AreaInstructions = "instructions"
	AreaChats        = "chats"
	NotesName        = "memory/notes.md"
)

// ErrOutside: a path names what isn't the agent's to read through
// memory: outside its home (.., an absolute name, a link), or a file of
// its home memory doesn't show (its key, its settings).
var ErrOutside = errors.New("outside what memory reads")

// place is a path a call named, resolved: its name as the calls give it
// (files/a.md), its area, and for a conversation its thread; or the
// home's top level.
type place struct {
	name   string
	area   string
	thread string
	top    bool // the home's top level: its areas
}

// resolve confines name to what memory reads of the agent's home: a
// path relative to it (files/a.md, skills/x/SKILL.md, instructions/...,
// memory/notes.md, or chats/<thread>, a conversation's copy), with no
// ".." and no absolute name, "./" before it and "/" after a folder's
// taken as nothing. "", "." and "./" name the home's top level itself
// (place.top), which only list takes. Files refuses a link on the way
// when it is read. A conversation's file is found later (its copy may be
// memory's own).
func (m *Memory) resolve(name string) (place, error) {
	refuse := func(why string) (place, error) {
		return place{}, fmt.Errorf("%q: %s: %w", clip(name, 200), why, ErrOutside)
	}
	switch {
	case len(name) > 1024:
		return refuse("a path is at most 1,024 bytes")
	case strings.ContainsRune(name, 0) || strings.ContainsRune(name, '\\'):
		return refuse("a path holds no NUL or backslash")
	case path.IsAbs(name) || filepath.IsAbs(name) || filepath.VolumeName(name) != "":
		return refuse("an absolute path; paths are relative to the agent's home, such as files/notes.md")
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return refuse("a path never goes up (..)")
		}
	}
	clean := path.Clean(name)
	if name == "" || clean == "." {
		return place{name: ".", top: true}, nil
	}
	area, rest, _ := strings.Cut(clean, "/")
	switch area {
	case AreaFiles, AreaSkills, AreaInstructions:
	case "memory":
		if clean != NotesName {
			return refuse("of the memory folder only memory/notes.md is read")
		}
	case AreaChats:
		if rest == "" {
			return place{name: AreaChats, area: AreaChats}, nil
		}
		th, err := threadNamed(rest)
		if err != nil {
			return refuse("names no conversation (chats/<thread>, such as chats/telegram:42)")
		}
		return place{name: AreaChats + "/" + th, area: AreaChats, thread: th}, nil
	default:
		return refuse("memory reads files/, skills/, instructions/, memory/notes.md and chats/<thread>")
	}
	if err := store.CheckFileName(clean); err != nil {
		return refuse("not a plain path")
	}
	return place{name: clean, area: area}, nil
}

// threadNamed reads a conversation's name: its thread id (telegram:42)
// or its folder's name (telegram-42).
func threadNamed(s string) (string, error) {
	if err := contract.CheckThread(s); err == nil {
		return s, nil
	}
	return contract.FolderThread(s)
}

// clip cuts s to at most n bytes, on a rune's boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
