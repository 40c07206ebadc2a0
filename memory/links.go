package memory

import (
	"net/url"
	"path"
	"strings"
)

// rawLink is a link as a Markdown text writes it: its line, its target,
// and whether it is a wiki link ([[Name]]).
type rawLink struct {
	line   int
	target string
	wiki   bool
}

// parseLinks finds the links of a Markdown text: inline links and
// images ([text](target), ![alt](target)), reference definitions
// ([ref]: target) and wiki links ([[Name]], [[Name|shown]]), never inside
// a code span or a fenced code block.
func parseLinks(text string) []rawLink {
	var out []rawLink
	fence := "" // the open fence's run, "" outside one
	for i, l := range strings.Split(text, "\n") {
		n := i + 1
		trim := strings.TrimLeft(l, " ")
		if len(l)-len(trim) <= 3 {
			if run := fenceRun(trim); run != "" {
				switch {
				case fence == "":
					fence = run
					continue
				case run[0] == fence[0] && len(run) >= len(fence) && strings.TrimSpace(trim[len(run):]) == "":
					fence = ""
					continue
				}
			}
		}
		if fence != "" {
			continue
		}
		if t, ok := refDefinition(trim); ok && len(l)-len(trim) <= 3 {
			out = append(out, rawLink{line: n, target: t})
			continue
		}
		out = append(out, lineLinks(n, l)...)
	}
	return out
}

// fenceRun is the run of ``` or ~~~ (three or more) opening s, "" if none.
func fenceRun(s string) string {
	if len(s) < 3 || s[0] != '`' && s[0] != '~' {
		return ""
	}
	i := 0
	for i < len(s) && s[i] == s[0] {
		i++
	}
	if i < 3 || s[0] == '`' && strings.Contains(s[i:], "`") {
		return ""
	}
	return s[:i]
}

// refDefinition reads "[ref]: target".
func refDefinition(s string) (string, bool) {
	if !strings.HasPrefix(s, "[") || strings.HasPrefix(s, "[[") {
		return "", false
	}
	end := strings.Index(s, "]:")
	if end < 2 {
		return "", false
	}
	f := strings.Fields(s[end+2:])
	if len(f) == 0 {
		return "", false
	}
	t := strings.Trim(f[0], "<>")
	return t, t != ""
}

// lineLinks finds the inline and wiki links of one line, outside its
// code spans.
func lineLinks(n int, l string) []rawLink {
	var out []rawLink
	open := 0 // brackets opened, not escaped, not yet closed
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\':
			i++
		case l[i] == '`':
			run := 0
			for i+run < len(l) && l[i+run] == '`' {
				run++
			}
			// A code span ends at the next run of as many backticks;
			// without one the backticks are text.
			if end := closingRun(l[i+run:], run); end >= 0 {
				i += run + end + run - 1
			} else {
				i += run - 1
			}
		case strings.HasPrefix(l[i:], "[["):
			end := strings.Index(l[i+2:], "]]")
			if end < 0 {
				continue
			}
			name := l[i+2 : i+2+end]
			name, _, _ = strings.Cut(name, "|")
			name, _, _ = strings.Cut(name, "#")
			if name = strings.TrimSpace(name); name != "" {
				out = append(out, rawLink{line: n, target: name, wiki: true})
			}
			i += 2 + end + 1
		case l[i] == '[':
			open++
		case l[i] == ']' && open > 0:
			open--
			if i+1 >= len(l) || l[i+1] != '(' {
				continue
			}
			t, end := inlineTarget(l[i+2:])
			if end < 0 {
				continue
			}
			if t != "" {
				out = append(out, rawLink{line: n, target: t})
			}
			i += 2 + end
		}
	}
	return out
}

// closingRun is where in s a run of exactly n backticks starts, -1 if none.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

// inlineTarget reads a link's "(target "title")" after its "(": the
// target, and where its ")" is (-1 when there is none).
func inlineTarget(s string) (string, int) {
	if strings.HasPrefix(s, "<") {
		end := strings.Index(s, ">")
		if end < 0 {
			return "", -1
		}
		close := strings.Index(s[end:], ")")
		if close < 0 {
			return "", -1
		}
		return s[1:end], end + close
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				t, _, _ := strings.Cut(strings.TrimSpace(s[:i]), " ")
				return t, i
			}
			depth--
		case ' ':
			if depth == 0 {
				close := strings.Index(s[i:], ")")
				if close < 0 {
					return "", -1
				}
				return s[:i], i + close
			}
		}
	}
	return "", -1
}

// resolveLink resolves a link of the source named from: a relative path
// against its folder (a note's against files/), a wiki link by name
// later (Link.Wiki). A link to the web or elsewhere resolves to "", as
// does one that leaves what memory reads.
func resolveLink(from string, r rawLink) Link {
	l := Link{Line: r.line, Target: r.target}
	if r.wiki {
		l.Wiki = wikiKey(r.target)
		if strings.Contains(r.target, "/") || strings.HasSuffix(strings.ToLower(r.target), ".md") {
			l.Resolved = inArea(path.Join(AreaFiles, withMD(r.target)))
		}
		return l
	}
	t := r.target
	if u, err := url.Parse(t); err != nil || u.Scheme != "" || u.Host != "" {
		return l
	}
	t, _, _ = strings.Cut(t, "#")
	t, _, _ = strings.Cut(t, "?")
	if un, err := url.PathUnescape(t); err == nil {
		t = un
	}
	if t == "" {
		return l
	}
	dir := path.Dir(from)
	if from == NotesName || strings.HasPrefix(t, "/") {
		dir = AreaFiles
	}
	l.Resolved = inArea(path.Join(dir, t))
	return l
}

// inArea is p when it is in files/ or skills/, else "".
func inArea(p string) string {
	if strings.HasPrefix(p, AreaFiles+"/") || strings.HasPrefix(p, AreaSkills+"/") {
		return p
	}
	return ""
}

func withMD(s string) string {
	if strings.Contains(path.Base(s), ".") {
		return s
	}
	return s + ".md"
}

// nearestWiki is the file a wiki link by name alone ([[Name]]) in the
// source from names, of the files so named: the one whose folder is
// nearest from's: the one sharing the most folders of from's path (its
// own folder's first, then those below it, then its parent's), and of
// those, the one in the fewest folders, then the shortest name, then the
// first in order (a note's links are from files/). So a link names one
// file, and a file elsewhere of the same name doesn't take its
// backlinks. "" when names is empty.
func nearestWiki(from string, names []string) string {
	dir := path.Dir(from)
	if from == NotesName {
		dir = AreaFiles
	}
	best, bestShared := "", -1
	for _, n := range names {
		shared := sharedFolders(dir, path.Dir(n))
		if shared != bestShared {
			if shared > bestShared {
				best, bestShared = n, shared
			}
			continue
		}
		if d, bd := strings.Count(n, "/"), strings.Count(best, "/"); d < bd || d == bd && (len(n) < len(best) || len(n) == len(best) && n < best) {
			best = n
		}
	}
	return best
}

// sharedFolders is how many folders, from the top, a and b have in
// common.
func sharedFolders(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	return n
}

// wikiKey is how a wiki link's name and a file's match: the base name
// without .md, in lower case.
func wikiKey(name string) string {
	base := path.Base(name)
	return strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(base, ".md"), ".MD"))
}

// markdown says whether a source's links are read.
func markdown(name string) bool {
	n := strings.ToLower(name)
	return name == NotesName || strings.HasSuffix(n, ".md") || strings.HasSuffix(n, ".markdown")
}
