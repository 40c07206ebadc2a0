//go:build unix

package fts_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/memory"
	"github.com/lnk-dev/link/memory/fts"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/transcript"
)

// corpus writes n sources under the agent at p: half Markdown files of
// about 2 KB, half conversations of about 100 messages each (their
// copies, as the harness writes them), words drawn Zipf-like from a
// vocabulary of 20,000, one file in 20 in Chinese or Japanese. It
// returns the sources' bytes, and the vocabulary, the most used first.
func corpus(tb testing.TB, p store.Paths, n int) (int64, []string) {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "zo", "pe", "an", "el", "ir", "on", "ul", "ba", "da", "fu", "gi", "ho"}
	vocab := make([]string, 20000)
	for i := range vocab {
		var w strings.Builder
		for range 2 + r.IntN(3) {
			w.WriteString(syl[r.IntN(len(syl))])
		}
		vocab[i] = w.String()
	}
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	cjk := []string{"我喜欢吃苹果", "和香蕉", "昨日は東京で寿司を食べました", "天气很好", "明天见", "会议改到下午三点", "电脑", "ありがとう"}
	sentence := func(words int, cj bool) string {
		var s strings.Builder
		for i := range words {
			if cj {
				s.WriteString(cjk[r.IntN(len(cjk))])
				continue
			}
			if i > 0 {
				s.WriteByte(' ')
			}
			s.WriteString(vocab[zipf.Uint64()])
		}
		s.WriteString(".")
		return s.String()
	}
	var total int64
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		cj := i%20 == 0
		if i%2 == 0 {
			var b strings.Builder
			fmt.Fprintf(&b, "# Page %d\n\n", i)
			for b.Len() < 2000 {
				b.WriteString(sentence(12, cj))
				b.WriteString(" ")
				b.WriteString(sentence(10, cj))
				b.WriteString("\n\n")
			}
			path := filepath.Join(p.Files(), fmt.Sprintf("d%02d", i%100), fmt.Sprintf("page%05d.md", i))
			writeFile(tb, path, b.String())
			total += int64(b.Len())
			continue
		}
		th := fmt.Sprintf("telegram:%d", i)
		var evs []store.Event
		for s := int64(1); s <= 100; s++ {
			e := store.Event{Seq: s, Time: at.Add(time.Duration(s) * time.Minute), Kind: store.KindMessage, Text: sentence(8+r.IntN(16), cj)}
			if s%2 == 0 {
				e.Kind = store.KindAnswer
			}
			evs = append(evs, e)
		}
		dir, _ := p.Conversation(th)
		cp := transcript.Render(evs)
		writeFile(tb, filepath.Join(dir, transcript.File), string(cp))
		writeFile(tb, filepath.Join(dir, "events.jsonl"), "{}\n") // a log conversation, begun
		total += int64(len(cp))
	}
	return total, vocab
}

func writeFile(tb testing.TB, path, text string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func dirSize(tb testing.TB, dir, prefix string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			info, err := e.Info()
			if err == nil {
				n += info.Size()
			}
		}
	}
	return n
}

// BenchmarkMemory indexes 10,000 generated sources cold (files a
// second), then times a memory started again over the index: its first
// search (a look at every source), then searches (p50 and p95, each
// with its check of what changed first), against a floor measured in the same run:
// reading every source and looking for the word in it, as a search
// without an index would. It reports the index's size against the
// sources'. LNK_MEMORY_BENCH_N changes the count.
func BenchmarkMemory(b *testing.B) {
	n := 10000
	if v := os.Getenv("LNK_MEMORY_BENCH_N"); v != "" {
		fmt.Sscan(v, &n)
	}
	ctx := context.Background()
	p, _ := store.For(b.TempDir(), "main")
	src, vocab := corpus(b, p, n)
	os.MkdirAll(filepath.Join(p.Root, "memory"), 0o700)
	idxPath := filepath.Join(p.Root, "memory", "index.sqlite")
	idx, err := fts.Open(ctx, idxPath)
	if err != nil {
		b.Fatal(err)
	}
	m, err := memory.New(memory.Config{Paths: p, Index: idx})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	fresh, err := m.Sync(ctx, 0)
	if err != nil || fresh.Stale() {
		b.Fatal(err, fresh)
	}
	cold, coldCPU := time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	// A checkpoint, so the size is the index's, not its log's; then a
	// memory started again over it, as a new process would be.
	m.Close()
	if idx, err = fts.Open(ctx, idxPath); err != nil {
		b.Fatal(err)
	}
	m, _ = memory.New(memory.Config{Paths: p, Index: idx})
	defer m.Close()
	size := dirSize(b, filepath.Join(p.Root, "memory"), "index.sqlite")
	// Its first search looks at every source (and watches its folders).
	t0 := time.Now()
	if a, err := m.Search(ctx, vocab[0], 10); err != nil || a.Fresh.Stale() {
		b.Fatal(err, a.Fresh)
	}
	first := time.Since(t0)

	// The classes of query an agent sends, each timed on its own: a word
	// of the corpus's most common, a rare one, several common ones (the
	// slow class: every chunk holding any of them is ranked), rare and
	// common together, one with a word found nowhere, and Chinese or
	// Japanese phrases.
	classes := []struct {
		name    string
		queries []string
	}{
		{"one-common", []string{vocab[0], vocab[1], vocab[2], vocab[3]}},
		{"one-rare", []string{vocab[3000], vocab[5000], vocab[8000], vocab[12000]}},
		{"many-common", []string{vocab[0] + " " + vocab[1], vocab[2] + " " + vocab[3] + " " + vocab[4], vocab[0] + " " + vocab[5], vocab[1] + " " + vocab[2] + " " + vocab[6]}},
		{"rare-and-common", []string{vocab[3000] + " " + vocab[0], vocab[5000] + " " + vocab[1] + " " + vocab[2], vocab[8000] + " " + vocab[3], vocab[100] + " " + vocab[4]}},
		{"word-found-nowhere", []string{vocab[0] + " zzqnowhere", vocab[3000] + " qqxtypo", vocab[1] + " " + vocab[2] + " zzqz", "xxyyzz"}},
		{"cjk", []string{"苹果", "東京で寿司", "会议改到下午", "天气"}},
	}
	var took []time.Duration
	cpu0 = cpuTime()
	for _, c := range classes {
		var class []time.Duration
		classCPU := cpuTime()
		for i := range 40 {
			q := c.queries[i%len(c.queries)]
			t0 := time.Now()
			a, err := m.Search(ctx, q, 10)
			class = append(class, time.Since(t0))
			if err != nil || a.Fresh.Stale() {
				b.Fatal(err, a.Fresh)
			}
			if len(a.Results) == 0 && q != "xxyyzz" {
				b.Fatalf("%q found nothing", q)
			}
		}
		b.ReportMetric(float64((cpuTime()-classCPU).Microseconds())/1000/40, c.name+"-cpu-ms")
		took = append(took, class...)
		slices.Sort(class)
		b.ReportMetric(float64(class[len(class)/2].Microseconds())/1000, c.name+"-p50-ms")
		b.ReportMetric(float64(class[len(class)*95/100].Microseconds())/1000, c.name+"-p95-ms")
	}
	searchCPU := (cpuTime() - cpu0) / time.Duration(len(took))
	slices.Sort(took)
	// The floor: one search without an index, every source read.
	t0 = time.Now()
	found := 0
	filepath.WalkDir(p.Root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".md")) {
			if bs, err := os.ReadFile(path); err == nil && strings.Contains(string(bs), "mine") {
				found++
			}
		}
		return nil
	})
	scan := time.Since(t0)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(float64(n)/cold.Seconds(), "files/s")
	b.ReportMetric(float64(n)/coldCPU.Seconds(), "files/cpu-s")
	b.ReportMetric(ms(searchCPU), "search-cpu-ms")
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*95/100]), "p95-ms")
	b.ReportMetric(ms(first), "first-ms")
	b.ReportMetric(ms(scan), "scan-floor-ms")
	b.ReportMetric(float64(size)/float64(src), "index/sources")
	b.Logf("%d sources, %.1f MB; cold index %v (%.0f files/s); index %.1f MB (%.2f of the sources); first search %.1f ms; search p50 %.1f ms, p95 %.1f ms; a scan of every source %.0f ms (p50 %.3f of it); CPU: cold %v (%.0f files/s), a search %.1f ms",
		n, float64(src)/1e6, cold.Round(time.Millisecond), float64(n)/cold.Seconds(), float64(size)/1e6, float64(size)/float64(src), ms(first), ms(took[len(took)/2]), ms(took[len(took)*95/100]), ms(scan), ms(took[len(took)/2])/ms(scan), coldCPU.Round(time.Millisecond), float64(n)/coldCPU.Seconds(), ms(searchCPU))
}

// cpuTime is the CPU time this process has used, user and system: what
// a run on a machine shared with others can still compare.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
