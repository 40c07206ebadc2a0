package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/transcript"
)

// putBatch is how many sources one write of the index takes at most,
// and putBytes about how many bytes of their text.
const (
	putBatch = 256
	putBytes = 16 << 20
)

// Freshness says how up to date the index was when a search answered:
// Pending sources changed that it hadn't taken in yet, Skipped those it
// couldn't read.
type Freshness struct {
	Pending int
	Skipped []string
	// NotIndexed are the files past the most memory indexes of one
	// (1 MiB), each with its size: never searched, by rule.
	NotIndexed []string
}

// Stale says whether the answer may miss what changed.
func (f Freshness) Stale() bool { return f.Pending > 0 || len(f.Skipped) > 0 }

// Sync brings the index up to date with the sources: what changed
// looked at again (every source's stamp, or with the kernel's record of
// changes those it names), what changed read again, what went
// forgotten. It stops taking in changes at ctx's end or after budget
// (0: none), saying how many it left.
func (m *Memory) Sync(ctx context.Context, budget time.Duration) (Freshness, error) {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	return m.sync(ctx, budget)
}

func (m *Memory) sync(ctx context.Context, budget time.Duration) (Freshness, error) {
	start := time.Now()
	stamps, gen, err := m.idx.Stamps(ctx)
	if err != nil {
		return Freshness{}, err
	}
	m.lastStamps = stamps
	if err := m.look(ctx); err != nil {
		return Freshness{}, err
	}
	// What to compare with the index: every source after a full look or
	// when the index was written by another process (or made again),
	// else only those looked at again since they last matched it.
	names := m.unsynced
	if m.syncAll || gen != m.stampsGen {
		names = make(map[string]bool, len(m.srcs)+len(stamps))
		for n := range m.srcs {
			names[n] = true
		}
		for n := range stamps {
			names[n] = true
		}
	}
	m.syncAll, m.stampsGen = true, gen // until this sync is done
	changed, gone := m.differs(names, stamps)
	if len(gone) > 0 {
		if err := m.idx.Remove(ctx, gone); err != nil {
			return Freshness{}, err
		}
		m.dropCopies(gone)
	}
	f := m.unindexed()
	unsynced := map[string]bool{}
	for i := 0; i < len(changed); {
		if budget > 0 && time.Since(start) > budget || ctx.Err() != nil {
			f.Pending = len(changed) - i
			for _, s := range changed[i:] {
				unsynced[s.Name] = true
			}
			break
		}
		docs, n, bad := m.docs(ctx, changed[i:min(i+putBatch, len(changed))])
		batch := changed[i : i+n]
		i += n
		f.Skipped = append(f.Skipped, bad...)
		if len(bad) > 0 {
			for _, s := range batch {
				unsynced[s.Name] = true // those not read are tried again
			}
		}
		if err := m.idx.Put(ctx, docs); err != nil {
			return f, err
		}
	}
	m.unsynced, m.syncAll = unsynced, false
	return f, nil
}

// differs is what of names differs from the index's stamps: the
// sources changed (by name), and the names of those gone; a source
// skipped is neither.
func (m *Memory) differs(names map[string]bool, stamps map[string]string) (changed []Source, gone []string) {
	for name := range names {
		s, ok := m.srcs[name]
		if _, skipped := m.skipped[name]; !ok && skipped {
			continue
		}
		indexed, had := stamps[name]
		switch {
		case ok && indexed != s.Stamp:
			changed = append(changed, s)
		case !ok && had:
			gone = append(gone, name)
		}
	}
	slices.SortFunc(changed, func(a, b Source) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(gone)
	return changed, gone
}

// unindexed is a freshness saying what isn't indexed: the sources
// skipped, with why, and the files too large, with their sizes.
func (m *Memory) unindexed() Freshness {
	f := Freshness{}
	for name, why := range m.skipped {
		f.Skipped = append(f.Skipped, name+": "+why)
	}
	slices.Sort(f.Skipped)
	for name, size := range m.large {
		f.NotIndexed = append(f.NotIndexed, fmt.Sprintf("%s (%s bytes)", name, comma(int(size))))
	}
	slices.Sort(f.NotIndexed)
	return f
}

// take indexes srcs, or forgets them when gone.
func (m *Memory) take(ctx context.Context, srcs []Source, gone bool) error {
	if gone {
		names := make([]string, len(srcs))
		for i, s := range srcs {
			names[i] = s.Name
		}
		return m.idx.Remove(ctx, names)
	}
	for len(srcs) > 0 {
		docs, n, bad := m.docs(ctx, srcs)
		if len(bad) > 0 {
			return errors.New(strings.Join(bad, "; "))
		}
		if err := m.idx.Put(ctx, docs); err != nil {
			return err
		}
		srcs = srcs[n:]
	}
	return nil
}

// docs reads srcs and cuts each into chunks, as many of them as come to
// putBytes (one at least): n says how many were taken, so what one write
// of the index holds stays bounded however large the sources are. One
// that can't be read is said in bad and left as it was indexed.
func (m *Memory) docs(ctx context.Context, srcs []Source) (docs []Doc, n int, bad []string) {
	size := 0
	for _, s := range srcs {
		if n > 0 && size >= putBytes {
			break
		}
		n++
		d, err := m.doc(ctx, s)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", s.Name, err))
			continue
		}
		for _, c := range d.Chunks {
			size += len(c.Text)
		}
		docs = append(docs, d)
	}
	return docs, n, bad
}

// doc reads one source: a file or the notes as they are, a conversation
// through its copy (memory's own made up to date first).
func (m *Memory) doc(ctx context.Context, s Source) (Doc, error) {
	if s.Kind == KindChat && !copyKept(s.driver) {
		if err := m.updateCopy(ctx, s); err != nil {
			return Doc{}, err
		}
	}
	most := maxFile
	if s.Kind == KindChat {
		most = maxCopy
	}
	b, cut, err := m.readFile(ctx, s.File, most)
	if err != nil {
		return Doc{}, err
	}
	d := Doc{Source: s}
	if cut && s.Kind == KindChat {
		// A conversation past maxCopy: what fits is indexed.
		m.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "a copy past memory's most is indexed only to it", slog.String("source", s.Name), slog.Int("most", maxCopy))
		cut, b = false, b[:bytes.LastIndexByte(b, '\n')+1]
	}
	if cut || !isText(b) {
		return d, nil // indexed as nothing, so it isn't read again until it changes
	}
	switch s.Kind {
	case KindNotes:
		d.Chunks = chunkNotes(b)
	case KindChat:
		d.Chunks = chunkCopy(b)
	default:
		d.Chunks = chunkFile(b)
	}
	if markdown(s.Name) {
		for _, r := range parseLinks(string(b)) {
			d.Links = append(d.Links, resolveLink(s.Name, r))
		}
	}
	return d, nil
}

// updateCopy brings memory's own copy of a conversation kept compact or
// by a driver up to its last answer: what was said since the answer it
// ends with is added to its end, and one that doesn't end with an answer
// of the conversation is made again from every event.
func (m *Memory) updateCopy(ctx context.Context, s Source) error {
	if m.cfg.Conversations == nil {
		return fmt.Errorf("kept %s: %w", s.driver, driver.ErrNoDriver)
	}
	path := filepath.Join(m.paths.Root, filepath.FromSlash(s.File))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	end, ok, err := transcript.End(path)
	if err != nil {
		return err
	}
	if ok && end > 0 {
		evs, err := m.cfg.Conversations.Read(ctx, s.thread, end)
		if err != nil {
			return err
		}
		if len(evs) > 0 && evs[0].Seq == end && store.FinalAnswer(evs[0]) {
			add := transcript.Render(evs[1:])
			if len(add) == 0 {
				return nil
			}
			f, err := fsx.Open(path, os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				return err
			}
			_, err = f.Write(add)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}
	}
	all, err := m.cfg.Conversations.Read(ctx, s.thread, 1)
	if err != nil {
		return err
	}
	return fsx.Replace(path, transcript.Render(all), false)
}

// dropCopies removes memory's own copies of the conversations gone.
func (m *Memory) dropCopies(gone []string) {
	for _, name := range gone {
		th, ok := strings.CutPrefix(name, AreaChats+"/")
		if !ok {
			continue
		}
		dir, err := m.paths.Conversation(th)
		if err != nil {
			continue
		}
		p := filepath.Join(m.paths.Root, filepath.FromSlash(copiesDir), filepath.Base(dir)+".md")
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			m.cfg.Logger.Warn("remove memory's copy", "path", p, "err", err)
		}
	}
}
