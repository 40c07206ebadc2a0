package run

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// capped keeps the head and the tail of what is written to it, at most
// max bytes in all, and counts what it let go between them: a command's
// output, however long, answered within its cap.
type capped struct {
	mu    sync.Mutex
	max   int
	head  []byte
	tail  []byte // a ring of the last max-len(head) bytes, from start
	start int
	total int64
}

func newCapped(max int) *capped { return &capped{max: max} }

func (c *capped) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(b)
	c.total += int64(n)
	if room := c.max/2 - len(c.head); room > 0 {
		k := min(room, len(b))
		c.head = append(c.head, b[:k]...)
		b = b[k:]
	}
	keep := c.max - c.max/2
	if len(b) >= keep {
		c.tail = append(c.tail[:0], b[len(b)-keep:]...)
		c.start = 0
		return n, nil
	}
	for len(b) > 0 {
		if len(c.tail) < keep {
			k := min(keep-len(c.tail), len(b))
			c.tail = append(c.tail, b[:k]...)
			b = b[k:]
			continue
		}
		k := copy(c.tail[c.start:], b)
		b = b[k:]
		c.start = (c.start + k) % keep
	}
	return n, nil
}

// text is what was kept, with the bytes cut said between head and tail;
// a character cut in two at either edge is left out whole.
func (c *capped) text() (s string, cut int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := append(append([]byte{}, c.tail[c.start:]...), c.tail[:c.start]...)
	cut = c.total - int64(len(c.head)) - int64(len(tail))
	if cut == 0 {
		return string(append(append([]byte{}, c.head...), tail...)), 0
	}
	head := c.head
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	cut = c.total - int64(len(head)) - int64(len(tail))
	var b strings.Builder
	b.Write(head)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[... %d bytes cut (of %d): the first %d and the last %d are shown ...]\n", cut, c.total, len(head), len(tail))
	b.Write(tail)
	return b.String(), cut
}
