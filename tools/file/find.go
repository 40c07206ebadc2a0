package file

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Find's bounds.
const (
	// DefaultFound is how many names or lines a find gives unless it says.
	DefaultFound = 100
	// MaxFound is the most names or lines one find gives.
	MaxFound = 1000
	// MaxPattern is the most bytes of a glob or a regular expression.
	MaxPattern = 1000
	// MaxEntries is the most files and folders one find looks at.
	MaxEntries = 200_000
	// MaxSearched is the most bytes of one file a find's pattern looks
	// through; a larger file is searched that far, said.
	MaxSearched = 16 << 20
	// MaxFindTime is the longest one find looks.
	MaxFindTime = 20 * time.Second
	// maxMatchBytes is the most bytes of a matching line given.
	maxMatchBytes = 300
	// maxIgnoreFile is the most bytes of a .gitignore read.
	maxIgnoreFile = 1 << 20
)

// Query is what a find looks for: files under the folder Path whose
// names match Glob, and when Pattern is given, the lines of them it
// matches.
type Query struct {
	Path    string // a folder of the workspace, "." unless said
	Glob    string // names: "*.go" (a name at any depth) or "src/**/*.ts" (a path under Path)
	Pattern string // a regular expression (RE2) the lines found match
	Limit   int    // names or lines given: DefaultFound unless said, MaxFound at most
	Hidden  bool   // names beginning with "." looked at too
	Ignored bool   // what .gitignore and .ignore files leave out looked at too
}

// Found is what a find found, sorted by path (folder by folder, names in
// byte order) and line.
type Found struct {
	Files    []string // the names, when no Pattern
	Matches  []Match  // the lines, with a Pattern
	Searched int      // files whose lines were searched
	More     bool     // stopped at the limit: more may follow
	Binary   int      // files left unsearched as not text
	Partial  int      // files searched only their first MaxSearched bytes
	Stopped  string   // why the find stopped before looking everywhere
}

// Match is a line a find's pattern matched.
type Match struct {
	Path string
	Line int
	Text string
}

// Find finds files by name and lines by a regular expression, in the
// folder q.Path and every folder under it, leaving out what a .gitignore
// or .ignore file there (or above it, in the workspace) leaves out, as
// ripgrep does, unless q.Ignored, and names beginning with "." unless
// q.Hidden; ".git" always. Symbolic links are not followed.
func (w *Workspace) Find(ctx context.Context, q Query) (Found, error) {
	base := "."
	if q.Path != "" {
		var err error
		if base, err = CheckPath(q.Path); err != nil {
			return Found{}, err
		}
	}
	switch {
	case len(q.Glob) > MaxPattern || len(q.Pattern) > MaxPattern:
		return Found{}, refuse("a glob and a pattern are at most %d bytes each", MaxPattern)
	case q.Limit < 0:
		return Found{}, refuse("limit is how many names or lines, 1 to %d", MaxFound)
	}
	glob, err := CheckGlob(q.Glob)
	if err != nil {
		return Found{}, err
	}
	var re *regexp.Regexp
	if q.Pattern != "" {
		if re, err = regexp.Compile(q.Pattern); err != nil {
			return Found{}, refuse("pattern is not a regular expression (RE2, Go's syntax): %v", err)
		}
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultFound
	}
	limit = min(limit, MaxFound)
	ctx, cancel := context.WithTimeout(ctx, MaxFindTime)
	defer cancel()
	wk := &walker{ctx: ctx, q: q, glob: glob, base: base, re: re, limit: limit, box: w.box}
	err = w.box.run(func() error {
		root, err := openRoot(w.dir)
		if err != nil {
			return err
		}
		defer root.close()
		top, err := wk.descend(root, base)
		if err != nil {
			return describe(base, err)
		}
		wk.walk(top, base)
		wk.flush()
		return wk.err
	})
	if err != nil {
		return Found{}, err
	}
	return wk.out, nil
}

// CheckGlob checks a glob a find names: "" is every name.
func CheckGlob(g string) (string, error) {
	if g == "" {
		return "", nil
	}
	if strings.IndexByte(g, 0) >= 0 {
		return "", refuse("a glob holds no NUL byte")
	}
	g = strings.TrimPrefix(g, "./")
	if !doublestar.ValidatePattern(g) {
		return "", refuse("glob %q is not a glob: *, ?, [abc], {a,b} and ** (any folders) are its wildcards", clip(g, 200))
	}
	return g, nil
}

// walker walks the folders under a find's folder, in order. With a
// pattern, the files found are searched a batch at a time, each batch's
// files at once, so the first lines in order are known without
// searching every file, and no more folders are held open than a batch's.
type walker struct {
	ctx     context.Context
	q       Query
	glob    string
	base    string
	re      *regexp.Regexp
	limit   int
	box     *sandbox            // each searcher's thread is held by it too
	err     error               // a searcher's sandbox refused
	ignores []gitignore.Pattern // of the folders down to the one walked
	pending []found             // files found, not yet searched
	size    int                 // bytes of the lines had
	entries int
	done    bool
	out     Found
}

// found is a file a walk found: its path in the workspace, and the folder
// it's in, held open until its lines are searched.
type found struct {
	name string
	dir  *heldFolder
}

// heldFolder is a folder held open while files found in it wait to be
// searched, closed with the last of them.
type heldFolder struct {
	f    folder
	refs int
}

// release lets one of the folder's holders go, closing it with the last.
func (h *heldFolder) release() {
	if h.refs--; h.refs == 0 {
		h.f.close()
	}
}

// descend opens the folder base beneath root, taking in the ignore
// files of every folder on the way, as git does.
func (wk *walker) descend(root folder, base string) (folder, error) {
	wk.readIgnores(root, nil)
	if base == "." {
		return root.openFolder(".", false)
	}
	els := strings.Split(base, "/")
	for i := range els {
		dir, err := root.openFolder(path.Join(els[:i+1]...), false)
		if err != nil {
			return nil, err
		}
		wk.readIgnores(dir, els[:i+1])
		if i == len(els)-1 {
			return dir, nil
		}
		dir.close()
	}
	return nil, errOutside // no element: never, base is clean
}

// readIgnores adds the patterns of dir's .gitignore and .ignore files,
// dir being the folder at parts of the workspace.
func (wk *walker) readIgnores(dir folder, parts []string) {
	if wk.q.Ignored {
		return
	}
	for _, name := range []string{".gitignore", ".ignore"} {
		f, err := dir.childFile(name)
		if err != nil {
			continue // none, or not a file to read
		}
		sc := bufio.NewScanner(io.LimitReader(f, maxIgnoreFile))
		for sc.Scan() {
			line := strings.TrimSuffix(sc.Text(), "\r")
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			wk.ignores = append(wk.ignores, gitignore.ParsePattern(line, parts))
		}
		f.Close()
	}
}

// ignored says whether the ignore files leave out the name at parts.
func (wk *walker) ignored(parts []string, dir bool) bool {
	for i := len(wk.ignores) - 1; i >= 0; i-- {
		switch wk.ignores[i].Match(parts, dir) {
		case gitignore.Exclude:
			return true
		case gitignore.Include:
			return false
		}
	}
	return false
}

// walk takes in the files under dir (the folder at rel) that the glob
// matches, in order, until the find is done, and closes dir once none of
// them waits to be searched.
func (wk *walker) walk(dir folder, rel string) {
	held := &heldFolder{f: dir, refs: 1}
	defer held.release()
	// A folder is read whole to be sorted, up to what a find looks at
	// in all: one over it is cut, said.
	room := maxEntries - wk.entries
	entries, err := dir.list(room + 1)
	if err != nil {
		return
	}
	if len(entries) > room {
		entries = entries[:room]
		if wk.out.Stopped == "" {
			wk.out.Stopped = fmt.Sprintf("%s holds more than the %d files and folders a find looks at: what it found there is some of them, not the first", folderName(rel), maxEntries)
		}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	var parts []string
	if rel != "." {
		parts = strings.Split(rel, "/")
	}
	for _, e := range entries {
		if wk.done {
			return
		}
		if wk.entries++; wk.entries > maxEntries {
			wk.stop(fmt.Sprintf("looked at the first %d files and folders, the most a find looks at", maxEntries))
			return
		}
		if wk.entries%1024 == 0 && wk.ctx.Err() != nil {
			wk.stop(fmt.Sprintf("looked for %s, the longest a find looks", MaxFindTime))
			return
		}
		name := e.Name()
		if name == ".git" || (!wk.q.Hidden && strings.HasPrefix(name, ".")) || isTempName(name) {
			continue
		}
		isDir := e.IsDir()
		if !isDir && !e.Type().IsRegular() {
			continue // a link, a named pipe: not followed, not searched
		}
		at := append(parts[:len(parts):len(parts)], name)
		if !wk.q.Ignored && wk.ignored(at, isDir) {
			continue
		}
		p := path.Join(rel, name)
		if isDir {
			sub, err := dir.child(name)
			if err != nil {
				continue
			}
			n := len(wk.ignores)
			wk.readIgnores(sub, at)
			wk.walk(sub, p)
			wk.ignores = wk.ignores[:n]
			continue
		}
		if !wk.matches(p, name) {
			continue
		}
		if wk.re == nil {
			if len(wk.out.Files) == wk.limit {
				wk.out.More, wk.done = true, true
				return
			}
			wk.out.Files = append(wk.out.Files, p)
			continue
		}
		held.refs++
		wk.pending = append(wk.pending, found{name: p, dir: held})
		if len(wk.pending) == searchBatch {
			wk.flush()
		}
	}
}

// maxEntries is MaxEntries, lowered by a test.
var maxEntries = MaxEntries

// folderName is how a folder of the workspace at rel is said.
func folderName(rel string) string {
	if rel == "." {
		return "the workspace"
	}
	return rel
}

// searchBatch is how many files a find searches at once.
const searchBatch = 256

// stop ends the walk, saying why.
func (wk *walker) stop(why string) {
	wk.done = true
	if wk.out.Stopped == "" {
		wk.out.Stopped = why
	}
}

// matches says whether the glob matches the file at p (its name, name):
// a glob without "/" matches a name at any depth, one with "/" the path
// under the find's folder.
func (wk *walker) matches(p, name string) bool {
	if wk.glob == "" {
		return true
	}
	if !strings.Contains(wk.glob, "/") {
		ok, _ := doublestar.Match(wk.glob, name)
		return ok
	}
	under := p
	if wk.base != "." {
		under = strings.TrimPrefix(p, wk.base+"/")
	}
	ok, _ := doublestar.Match(wk.glob, under)
	return ok
}

// flush searches the files pending, at once, and takes in their lines
// in order, up to the limit.
func (wk *walker) flush() {
	files := wk.pending
	wk.pending = nil
	type result struct {
		lines   []Match
		binary  bool
		partial bool
	}
	results := make([]result, len(files))
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			err := wk.box.run(func() error {
				var buf []byte // each searcher's, reused file after file
				for {
					mu.Lock()
					j := next
					next++
					mu.Unlock()
					if j >= len(files) || wk.ctx.Err() != nil {
						return nil
					}
					r := &results[j]
					r.lines, r.binary, r.partial = grep(wk.ctx, files[j], wk.re, wk.limit, &buf)
				}
			})
			if err != nil {
				mu.Lock()
				wk.err = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for j, r := range results {
		files[j].dir.release()
		if wk.done {
			continue
		}
		wk.out.Searched++
		if r.binary {
			wk.out.Binary++
		}
		if r.partial {
			wk.out.Partial++
		}
		for _, m := range r.lines {
			if len(wk.out.Matches) == wk.limit || wk.size > MaxReadBytes {
				wk.out.More, wk.done = true, true
				break
			}
			wk.size += len(m.Path) + len(m.Text) + 16
			wk.out.Matches = append(wk.out.Matches, m)
		}
	}
	if wk.ctx.Err() != nil {
		wk.stop(fmt.Sprintf("looked for %s, the longest a find looks", MaxFindTime))
	}
}

// grep gives the lines of f that re matches, at most limit, each cut at
// maxMatchBytes; a binary file is left unsearched, a large one searched
// its first MaxSearched bytes.
func grep(ctx context.Context, f found, re *regexp.Regexp, limit int, buf *[]byte) (lines []Match, binary, partial bool) {
	if ctx.Err() != nil {
		return nil, false, false
	}
	b, partial, err := f.dir.f.readFile(path.Base(f.name), MaxSearched, *buf)
	if err != nil {
		return nil, false, false
	}
	*buf = b[:0]
	if looksBinary(b[:min(len(b), sniff)], len(b) <= sniff) {
		return nil, true, false
	}
	// A match holds the expression's literal prefix, if it has one: a
	// file without it has no line to look at.
	if prefix, _ := re.LiteralPrefix(); prefix != "" && !bytes.Contains(b, []byte(prefix)) {
		return nil, false, partial
	}
	for n := 1; len(b) > 0 && len(lines) < limit; n++ {
		l := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		l = bytes.TrimSuffix(l, []byte("\r"))
		if re.Match(l) {
			lines = append(lines, Match{Path: f.name, Line: n, Text: clip(string(l), maxMatchBytes)})
		}
	}
	return lines, false, partial
}

// isTempName says whether name is a write's temporary file.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".lnk-write")
}
