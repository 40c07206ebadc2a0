package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/lnk-dev/link/store"
)

// Search bounds: the results an answer has by default and at most, and
// a snippet's length in bytes.
const (
	DefaultResults = 10
	MaxResults     = 50
	snippetBytes   = 240
)

// Result is one thing a search found: its source, where in it, and a
// snippet of it.
type Result struct {
	Source  string // memory/notes.md, files/a.md, chats/telegram:42
	Kind    string
	Line    int    // its first line in the source (for a conversation, in its copy)
	Lines   int    // how many lines it has
	Seq     int64  // a message's number in its conversation
	Label   string // a message's heading: who and when
	Snippet string

	matched int // how many of the query's words its text holds
}

// Found is what a search found: the results, best first, how they were
// ranked, and how fresh the index was.
type Found struct {
	Results []Result
	Ranking string
	Fresh   Freshness
}

// Search finds the n chunks of the sources that best match query,
// ranked by BM25 over the full text, and with an Embedder by both BM25
// and the embeddings' similarity (reciprocal rank fusion). The index is
// brought up to date first, within the SyncBudget.
func (m *Memory) Search(ctx context.Context, query string, n int) (Found, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return Found{}, fmt.Errorf("search needs some words to look for: %w", ErrRefused)
	}
	if len(query) > 1000 {
		return Found{}, fmt.Errorf("a query is at most 1,000 bytes: %w", ErrRefused)
	}
	if n <= 0 {
		n = DefaultResults
	}
	n = min(n, MaxResults)
	fresh, err := m.Sync(ctx, m.cfg.SyncBudget)
	if err != nil {
		return Found{}, fmt.Errorf("search: bring the index up to date: %w", err)
	}
	want := n
	if m.cfg.Embedder != nil {
		want = max(n*5, 50)
	}
	found, err := m.idx.Search(ctx, query, want)
	if err != nil {
		return Found{}, fmt.Errorf("search: %w", err)
	}
	terms := queryTerms(query)
	results := make([]Result, 0, len(found))
	texts := make([]string, 0, len(found))
	files := map[string][]byte{}
	for _, h := range found {
		text := m.chunkText(ctx, files, h)
		if text == "" {
			continue // gone since it was indexed: the next search forgets it
		}
		c := h.Chunk
		if h.Kind == KindChat {
			c, text = message(c, text, terms)
		}
		results = append(results, Result{
			Source: h.Source, Kind: h.Kind, Line: c.Line, Lines: c.Lines,
			Seq: c.Seq, Label: c.Label, Snippet: snippet(text, terms),
			matched: hits(text, terms),
		})
		texts = append(texts, text)
	}
	a := Found{Results: results, Ranking: "full text (BM25)", Fresh: fresh}
	if m.cfg.Embedder != nil && len(results) > 0 {
		ranked, err := m.hybrid(ctx, query, results, texts)
		if err != nil {
			a.Ranking = fmt.Sprintf("full text (BM25) alone: the embedding model %s failed (%v)", m.cfg.Embedder.Name(), err)
		} else {
			a.Results, a.Ranking = ranked, "hybrid: full text (BM25) and the local embedding model "+m.cfg.Embedder.Name()
		}
	} else if m.cfg.EmbedNote != "" {
		a.Ranking += ", no embeddings: " + m.cfg.EmbedNote
	}
	a.Results = notesFirst(a.Results)
	if len(a.Results) > n {
		a.Results = a.Results[:n]
	}
	return a, nil
}

// notesFirst is results with each of the notes' before the first other
// result that holds no more of the query's words than it: among equal
// matches the owner's note, the source, ranks above what quotes it (an
// answer that repeated it, a file that copied it), whatever BM25 made
// of their lengths.
func notesFirst(results []Result) []Result {
	var notes, rest []Result
	for _, r := range results {
		if r.Kind == KindNotes {
			notes = append(notes, r)
		} else {
			rest = append(rest, r)
		}
	}
	if len(notes) == 0 {
		return results
	}
	slices.SortStableFunc(notes, func(a, b Result) int { return b.matched - a.matched })
	out := make([]Result, 0, len(results))
	for _, r := range rest {
		for len(notes) > 0 && notes[0].matched >= r.matched {
			out, notes = append(out, notes[0]), notes[1:]
		}
		out = append(out, r)
	}
	return append(out, notes...)
}

// chunkText reads a hit's chunk from its file as it is now, through
// Files (each file read once, kept in files), so no link on the way is
// followed; "" when it can't be read.
func (m *Memory) chunkText(ctx context.Context, files map[string][]byte, h Hit) string {
	b, ok := files[h.File]
	if !ok {
		most := maxFile
		if h.Kind == KindChat {
			most = maxCopy // indexed to there: a hit past a file's most is in it
		}
		var err error
		b, err = m.files.ReadFile(ctx, m.paths.Agent, h.File, most)
		if err != nil && !errors.Is(err, store.ErrTooLarge) {
			b = nil
		}
		files[h.File] = b
	}
	if h.Chunk.Off < 0 || h.Chunk.Off >= int64(len(b)) {
		return ""
	}
	b = b[h.Chunk.Off:]
	return string(b[:min(len(b), h.Chunk.Len)])
}

// queryTerms are the words of a query, in lower case, as a snippet
// looks for them.
func queryTerms(q string) []string {
	return strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
}

// snippet is the line of text that has the most of terms (not a
// heading or trailer), cut to snippetBytes around its first term.
func snippet(text string, terms []string) string {
	best, bestN := "", -1
	for _, l := range strings.Split(text, "\n") {
		if _, _, ok := parseHeading(l); ok || strings.HasPrefix(l, "<!-- seq ") || strings.TrimSpace(l) == "" {
			continue
		}
		if n := hits(l, terms); n > bestN {
			best, bestN = l, n
		}
	}
	best = strings.TrimSpace(best)
	if len(best) <= snippetBytes {
		return best
	}
	at := len(best)
	low := strings.ToLower(best)
	for _, t := range terms {
		if i := strings.Index(low, t); i >= 0 && i < at {
			at = i
		}
	}
	if at == len(best) {
		at = 0
	}
	start := max(at-snippetBytes/3, 0)
	for start > 0 && !utf8RuneStart(best[start]) {
		start--
	}
	out := clip(best[start:], snippetBytes)
	if start > 0 {
		out = "…" + out
	}
	return out
}

// hybrid ranks results by reciprocal rank fusion of their BM25 rank and
// their rank by the embeddings' cosine similarity to the query's.
func (m *Memory) hybrid(ctx context.Context, query string, results []Result, texts []string) ([]Result, error) {
	vecs, err := m.embed(ctx, append([]string{query}, texts...))
	if err != nil {
		return nil, err
	}
	q := vecs[0]
	type scored struct {
		i   int
		cos float64
	}
	byCos := make([]scored, len(results))
	for i := range results {
		byCos[i] = scored{i, cosine(q, vecs[i+1])}
	}
	sort.SliceStable(byCos, func(a, b int) bool { return byCos[a].cos > byCos[b].cos })
	const k = 60.0
	fused := make([]float64, len(results))
	for rank := range results {
		fused[rank] += 1 / (k + float64(rank+1))
	}
	for rank, s := range byCos {
		fused[s.i] += 1 / (k + float64(rank+1))
	}
	order := make([]int, len(results))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return fused[order[a]] > fused[order[b]] })
	out := make([]Result, len(results))
	for i, j := range order {
		out[i] = results[j]
	}
	return out, nil
}
