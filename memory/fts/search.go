package fts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/lnk-dev/link/memory"
)

// spaceless says whether r is of a script written without spaces
// between words (Han, Hiragana, Katakana, Hangul, Thai and the like),
// indexed a character a token.
func spaceless(r rune) bool {
	if r < 0x0E00 { // below Thai, the first of them
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// Tokens is text as the index takes it: each character of a spaceless
// script set apart by spaces, so unicode61 makes each a token; the rest
// as it is.
func Tokens(text string) string {
	n := 0
	for _, r := range text {
		if spaceless(r) {
			n++
		}
	}
	if n == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 2*n)
	for _, r := range text {
		if spaceless(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// terms are a query's words as FTS5 phrases: each run of letters and
// digits a word, a run of a spaceless script a phrase of its characters,
// in lower case, each once.
func terms(q string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	var word, phrase strings.Builder
	flushWord := func() { add(word.String()); word.Reset() }
	flushPhrase := func() { add(strings.TrimSpace(phrase.String())); phrase.Reset() }
	for _, r := range strings.ToLower(q) {
		switch {
		case spaceless(r):
			flushWord()
			phrase.WriteRune(r)
			phrase.WriteByte(' ')
		case unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			flushPhrase()
			word.WriteRune(r)
		default:
			flushWord()
			flushPhrase()
		}
	}
	flushWord()
	flushPhrase()
	return out
}

// commonShare is the share of chunks past which a word is left out of a
// query that has rarer ones: it would rank little and cost a long read.
const commonShare = 0.1

// commonWindow is how many chunks holding them a query of common words
// alone ranks: the latest indexed. Every chunk holding a word in a tenth
// of them ranked was the slow search (a word in most chunks, tens of
// thousands ranked), and BM25 tells little between them, a common
// word's weight being near nothing.
const commonWindow = 2000

// match is the FTS5 query of q: its terms, any of them (BM25 ranks those
// with more, and rarer, first), less those too common to rank by when
// rarer ones that are found remain. A word found nowhere (a typo, a name
// never written) counts as no rarer one: it never takes the place of the
// words that are found. frequent says every term left is common.
func (x *Index) match(ctx context.Context, q string) (expr string, frequent bool, err error) {
	ts := terms(q)
	if len(ts) == 0 {
		return "", false, nil
	}
	if err := x.fresh(ctx); err != nil {
		return "", false, err
	}
	db, err := x.live(ctx)
	if err != nil {
		return "", false, err
	}
	x.mu.Lock()
	total := float64(x.chunks)
	x.mu.Unlock()
	var rare, common []string
	for _, t := range ts {
		if strings.Contains(t, " ") {
			rare = append(rare, t)
			continue
		}
		var docs float64
		err := db.QueryRowContext(ctx, "SELECT doc FROM vocab WHERE term = ?", t).Scan(&docs)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			// found nowhere: matches nothing, drops nothing
		case err == nil && docs > commonShare*total && total >= 100:
			common = append(common, t)
		default:
			rare = append(rare, t)
		}
	}
	switch {
	case len(rare) > 0:
		ts = rare
	case len(common) > 0:
		ts, frequent = common, true
	default:
		return "", false, nil
	}
	quoted := make([]string, len(ts))
	for i, t := range ts {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(quoted, " OR "), frequent, nil
}

// Search finds the n chunks ranking best for q by BM25, best first, and
// after them every chunk of the notes that matches q and isn't among
// them: the owner's notes are found whatever quotes them, however often.
func (x *Index) Search(ctx context.Context, q string, n int) ([]memory.Hit, error) {
	expr, frequent, err := x.match(ctx, q)
	if err != nil || expr == "" {
		return nil, err
	}
	db, err := x.live(ctx)
	if err != nil {
		return nil, err
	}
	ranked := `SELECT rowid, rank FROM text WHERE text MATCH ?1 ORDER BY rank LIMIT ?2`
	if frequent {
		ranked = `SELECT rowid, rank FROM (SELECT rowid, rank FROM text WHERE text MATCH ?1 ORDER BY rowid DESC LIMIT ?3) ORDER BY rank LIMIT ?2`
	}
	out, err := hits(ctx, db, `SELECT s.name, s.kind, s.file, c.line, c.lines, c.off, c.len, c.seq, c.label, t.rank
		FROM (`+ranked+`) t
		JOIN chunks c ON c.id = t.rowid JOIN sources s ON s.id = c.source ORDER BY t.rank`, expr, n, commonWindow)
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", q, err)
	}
	// The notes' chunks are one source's, numbered together: the range
	// of their ids (found by the source's unique name) bounds the full
	// text's read to them.
	var lo, hi sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT min(c.id), max(c.id) FROM chunks c JOIN sources s ON s.id = c.source WHERE s.name = ?`, memory.NotesName).Scan(&lo, &hi); err != nil {
		return nil, fmt.Errorf("search %q: %w", q, err)
	}
	if !lo.Valid {
		return out, nil
	}
	notes, err := hits(ctx, db, `SELECT s.name, s.kind, s.file, c.line, c.lines, c.off, c.len, c.seq, c.label, t.rank
		FROM (SELECT rowid, rank FROM text WHERE text MATCH ? AND rowid BETWEEN ? AND ?) t
		JOIN chunks c ON c.id = t.rowid JOIN sources s ON s.id = c.source WHERE s.kind = ? ORDER BY t.rank`, expr, lo.Int64, hi.Int64, memory.KindNotes)
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", q, err)
	}
	for _, h := range notes {
		if !slices.ContainsFunc(out, func(o memory.Hit) bool { return o.Source == h.Source && o.Chunk.Off == h.Chunk.Off }) {
			out = append(out, h)
		}
	}
	return out, nil
}

// hits are the rows of a search's query.
func hits(ctx context.Context, db *sql.DB, query string, args ...any) ([]memory.Hit, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.Hit
	for rows.Next() {
		var h memory.Hit
		c := &h.Chunk
		if err := rows.Scan(&h.Source, &h.Kind, &h.File, &c.Line, &c.Lines, &c.Off, &c.Len, &c.Seq, &c.Label, &h.Score); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
