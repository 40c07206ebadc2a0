package prompt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/lnk-dev/link/store"
)

// The repository's files, and the bounds of looking for them.
const (
	// FilesFolder is the agent's files folder in its home, the
	// repository's first level.
	FilesFolder = "files"
	agentsFile  = "AGENTS.md"
	claudeFile  = "CLAUDE.md"
	// maxRepoFolders bounds the folders looked in, the files folder's
	// first, then each level's in order of name.
	maxRepoFolders = 64
	// maxRepoEntries bounds the entries listed of one folder.
	maxRepoEntries = 1024
)

// repository is the repository's section: in the files folder and its
// folders to src.Depth levels (hidden ones passed over), each folder's
// AGENTS.md, else its CLAUDE.md, under its path; a CLAUDE.md that only
// points at an AGENTS.md (Claude Code's @AGENTS.md) adds nothing and is
// passed over. Past the section's most, whole files are left out, the
// deepest last in order first, and the section says how many.
func (c pass) repository(ctx context.Context, agent string, src Source, p *Prompt) (string, error) {
	type found struct{ path, text string }
	var files []found
	level := []string{FilesFolder}
	looked := 0
	for depth := 1; depth <= src.Depth && len(level) > 0; depth++ {
		var next []string
		for _, dir := range level {
			if looked == maxRepoFolders {
				break
			}
			looked++
			entries, err := c.files.ReadDir(ctx, agent, dir, maxRepoEntries)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				if ctx.Err() != nil {
					return "", ctx.Err()
				}
				p.Problems = append(p.Problems, fmt.Errorf("folder %s: %w", dir, err))
				continue
			}
			has := map[string]bool{}
			for _, e := range entries {
				switch {
				case e.Name == agentsFile || e.Name == claudeFile:
					has[e.Name] = !e.Dir
					if e.Symlink {
						p.Problems = append(p.Problems, fmt.Errorf("%s/%s %w", dir, e.Name, store.ErrSymlink))
						has[e.Name] = false
					}
				case e.Dir && !e.Symlink && !strings.HasPrefix(e.Name, "."):
					next = append(next, dir+"/"+e.Name)
				}
			}
			for _, name := range []string{agentsFile, claudeFile} {
				if !has[name] {
					continue
				}
				path := dir + "/" + name
				text, err := c.file(ctx, agent, path, src.Max)
				if err != nil {
					if ctx.Err() != nil {
						return "", ctx.Err()
					}
					p.Problems = append(p.Problems, fmt.Errorf("%s: %w", path, err))
					continue
				}
				if text == "" || (name == claudeFile && onlyPointsAtAgents(text)) {
					continue
				}
				files = append(files, found{path: strings.TrimPrefix(path, FilesFolder+"/"), text: text})
				break // one per folder
			}
		}
		level = next
	}
	entries := make([]string, len(files))
	for i, f := range files {
		entries[i] = "## " + f.path + "\n\n" + f.text
	}
	return list("", "\n\n", entries, src.Max, true), nil
}

// onlyPointsAtAgents says whether a CLAUDE.md's every line is an import
// of an AGENTS.md (@AGENTS.md, @./AGENTS.md, @../AGENTS.md), so reading
// it would read that file twice.
func onlyPointsAtAgents(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if !strings.HasPrefix(l, "@") || (l != "@"+agentsFile && !strings.HasSuffix(l, "/"+agentsFile)) {
			return false
		}
	}
	return true
}
