package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/lnk-dev/link/internal/frontmatter"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/router"
)

// Read bounds: the lines a read gives by default and at most, and its
// bytes at most.
const (
	DefaultLines = 200
	MaxLines     = 1000
	MaxReadBytes = 32 << 10
)

// Lines is what a read gives: lines From to From+len(Text)-1 of a source
// that has Total lines (-1 when it wasn't read to its end), and whether
// the text was cut at MaxReadBytes.
type Lines struct {
	Name  string
	From  int
	Text  []string
	Total int
	Cut   bool
}

// Read reads lines of a file, the notes or a conversation's copy: from
// line from (1 is the first), n of them (0 is DefaultLines; at most
// MaxLines, and MaxReadBytes in all).
func (m *Memory) Read(ctx context.Context, name string, from, n int) (Lines, error) {
	p, err := m.resolve(name)
	if err != nil {
		return Lines{}, err
	}
	if p.top {
		return Lines{}, fmt.Errorf("read %q: the home's top level, a folder; say a file such as files/notes.md, skills/<name>/SKILL.md, memory/notes.md or chats/<thread>: %w", name, ErrRefused)
	}
	if from <= 0 {
		from = 1
	}
	if n <= 0 {
		n = DefaultLines
	}
	n = min(n, MaxLines)
	file := p.name
	switch {
	case p.area == AreaChats && p.thread == "":
		return Lines{}, fmt.Errorf("read %s: a folder; list it, or read chats/<thread>: %w", p.name, ErrRefused)
	case p.area == AreaChats:
		if file, err = m.copyOf(ctx, p.thread); err != nil {
			return Lines{}, fmt.Errorf("read %s: %w", p.name, err)
		}
	}
	if info, err := m.files.Stat(ctx, m.paths.Agent, file); err == nil && info.Dir {
		return Lines{}, fmt.Errorf("read %s: a folder; list it: %w", p.name, ErrRefused)
	}
	most := maxFile
	if p.area == AreaChats {
		most = maxCopy
	}
	b, _, err := m.readFile(ctx, file, most)
	if errors.Is(err, fs.ErrNotExist) {
		return Lines{}, fmt.Errorf("read %s: there is no such file: %w", p.name, ErrRefused)
	}
	if err != nil {
		return Lines{}, fmt.Errorf("read %s: %w", p.name, err)
	}
	if !isText(b) {
		return Lines{}, fmt.Errorf("read %s: not a text file: %w", p.name, ErrRefused)
	}
	out := Lines{Name: p.name, From: from}
	ls := splitLines(b)
	out.Total = len(ls)
	if from > len(ls) && len(ls) > 0 {
		return Lines{}, fmt.Errorf("read %s: it has %d lines, so none from line %d: %w", p.name, len(ls), from, ErrRefused)
	}
	size := 0
	for _, l := range ls[min(from-1, len(ls)):] {
		if len(out.Text) == n {
			break
		}
		t := l.s
		if size+len(t) > MaxReadBytes {
			t = clip(t, max(MaxReadBytes-size, 0))
			out.Cut = true
		}
		size += len(t) + 1
		out.Text = append(out.Text, t)
		if out.Cut {
			break
		}
	}
	return out, nil
}

// copyOf is the file of thread's copy, relative to the agent's home: a
// log's chat.md, else memory's own, brought up to date.
func (m *Memory) copyOf(ctx context.Context, thread string) (string, error) {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	chats, err := router.OpenChats(m.paths)
	if chats == nil && err == nil {
		return "", fmt.Errorf("no conversation has been answered there yet: %w", ErrRefused)
	}
	if err != nil {
		return "", err
	}
	defer chats.Close()
	s, ok, err := m.chatSource(ctx, chats, thread)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("no conversation has been answered there yet: %w", ErrRefused)
	}
	if !copyKept(s.driver) {
		if err := m.updateCopy(ctx, s); err != nil {
			return "", err
		}
	}
	return s.File, nil
}

// MaxList bounds the entries a list gives.
const MaxList = 500

// Entry is one thing a list gives: a file or folder, a skill, or a
// conversation.
type Entry struct {
	Name   string // as the calls name it
	Folder bool
	Size   int64
	About  string // a skill's description
}

// Listing is a list's answer; More says entries past MaxList were left
// out.
type Listing struct {
	Entries []Entry
	More    bool
}

// List lists a folder of files/, skills/ or instructions/ (its skills,
// each with its description, for skills/), or the conversations
// (chats); the home's top level ("", "." or "./") lists the areas.
func (m *Memory) List(ctx context.Context, name string) (Listing, error) {
	p, err := m.resolve(name)
	if err != nil {
		return Listing{}, err
	}
	if p.top {
		var l Listing
		for _, a := range []string{AreaFiles, AreaSkills, AreaInstructions, AreaChats} {
			l.Entries = append(l.Entries, Entry{Name: a, Folder: true})
		}
		l.Entries = append(l.Entries, Entry{Name: NotesName})
		return l, nil
	}
	if p.area == AreaChats {
		if p.thread != "" {
			return Listing{}, fmt.Errorf("list %s: a conversation; read it: %w", p.name, ErrRefused)
		}
		threads, err := router.Threads(ctx, m.paths)
		if err != nil {
			return Listing{}, err
		}
		var l Listing
		for _, th := range threads {
			l.add(Entry{Name: AreaChats + "/" + th})
		}
		return l, nil
	}
	entries, err := m.files.ReadDir(ctx, m.paths.Agent, p.name, MaxList+1)
	if errors.Is(err, fs.ErrNotExist) {
		if p.name == AreaFiles || p.name == AreaSkills || p.name == AreaInstructions {
			return Listing{}, nil // an area not made yet is empty
		}
		return Listing{}, fmt.Errorf("list %s: there is no such folder: %w", p.name, ErrRefused)
	}
	if errors.Is(err, store.ErrSymlink) || errors.Is(err, store.ErrBadName) {
		return Listing{}, fmt.Errorf("list %s: %w: %w", p.name, err, ErrOutside)
	}
	if err != nil {
		return Listing{}, fmt.Errorf("list %s: %w", p.name, err)
	}
	var l Listing
	for _, e := range entries {
		if e.Symlink || strings.HasPrefix(e.Name, ".") {
			continue
		}
		en := Entry{Name: p.name + "/" + e.Name, Folder: e.Dir}
		if !e.Dir {
			if info, err := m.files.Stat(ctx, m.paths.Agent, en.Name); err == nil {
				en.Size = info.Size
			}
		}
		if p.name == AreaSkills && e.Dir {
			if sk, ok := m.readSkill(ctx, en.Name+"/SKILL.md"); ok && sk.name == e.Name {
				en.About = sk.description
			}
		}
		l.add(en)
	}
	return l, nil
}

func (l *Listing) add(e Entry) {
	if len(l.Entries) >= MaxList {
		l.More = true
		return
	}
	l.Entries = append(l.Entries, e)
}

// skill is a skill's metadata, the front matter of its SKILL.md.
type skill struct{ name, description string }

// readSkill reads the name and description of a SKILL.md's front matter
// (its first frontmatter.Max bytes), as Link Harness's prompt reads them.
func (m *Memory) readSkill(ctx context.Context, name string) (skill, bool) {
	b, _, err := m.readFile(ctx, name, frontmatter.Max)
	if err != nil {
		return skill{}, false
	}
	fm, err := frontmatter.Read(string(b))
	if err != nil {
		return skill{}, false
	}
	s := skill{name: fm["name"], description: strings.Join(strings.Fields(fm["description"]), " ")}
	return s, s.name != "" && s.description != ""
}

// LinkOut is a link a source makes, resolved, and whether its target is
// missing.
type LinkOut struct {
	Link
	Broken bool
}

// Links are a note's or file's links: those it makes (each with its line
// and whether its target is missing) and those made to it.
type Links struct {
	Name string
	Out  []LinkOut
	In   []Backlink
}

// Links finds what links to and from the Markdown file or notes named.
func (m *Memory) Links(ctx context.Context, name string) (Links, error) {
	p, err := m.resolve(name)
	if err != nil {
		return Links{}, err
	}
	if p.top {
		return Links{}, fmt.Errorf("links %q: the home's top level, a folder; links are a note's or a file's: %w", name, ErrRefused)
	}
	if p.area == AreaChats {
		return Links{}, fmt.Errorf("links: %s is a conversation; links are a note's or a file's: %w", p.name, ErrRefused)
	}
	b, cut, err := m.readFile(ctx, p.name, maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Links{}, fmt.Errorf("links: %s: there is no such file: %w", p.name, ErrRefused)
	}
	if err != nil {
		return Links{}, fmt.Errorf("links: %w", err)
	}
	if cut || !isText(b) {
		return Links{}, fmt.Errorf("links: %s isn't a text file of at most 1 MiB: %w", p.name, ErrRefused)
	}
	if _, err := m.Sync(ctx, m.cfg.SyncBudget); err != nil {
		return Links{}, err
	}
	out := Links{Name: p.name}
	for _, r := range parseLinks(string(b)) {
		l := resolveLink(p.name, r)
		if l.Wiki != "" && l.Resolved == "" {
			names, err := m.idx.Wiki(ctx, l.Wiki)
			if err != nil {
				return Links{}, err
			}
			if len(names) > 0 {
				l.Resolved = nearestWiki(p.name, names)
			} else {
				l.Resolved = AreaFiles + "/" + withMD(r.target)
			}
		}
		lo := LinkOut{Link: l}
		if l.Resolved != "" {
			if _, err := m.files.Stat(ctx, m.paths.Agent, l.Resolved); err != nil {
				lo.Broken = true
			}
		}
		out.Out = append(out.Out, lo)
	}
	in, err := m.idx.Backlinks(ctx, p.name, wikiKey(p.name))
	if err != nil {
		return Links{}, err
	}
	// A wiki link by name links here only when this is the file so named
	// nearest the one linking.
	var named []string
	for _, b := range in {
		if b.Wiki && named == nil {
			if named, err = m.idx.Wiki(ctx, wikiKey(p.name)); err != nil {
				return Links{}, err
			}
		}
		if !b.Wiki || nearestWiki(b.From, named) == p.name {
			out.In = append(out.In, b)
		}
	}
	return out, nil
}
