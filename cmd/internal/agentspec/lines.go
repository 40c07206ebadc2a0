package agentspec

import (
	"github.com/pelletier/go-toml/v2/unstable"
)

// keyLines is the line of each key a spec writes, by its dotted name
// (window.max, tool.web.max_bytes): a table's header's line, a key's
// own, and a key of an inline table its line; the first line a name is
// on. Called on a spec go-toml decoded, so it parses.
func keyLines(b []byte) map[string]int {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(b)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = table[:0]
			it := e.Key()
			for it.Next() {
				k := it.Node()
				table = append(table, string(k.Data))
				mark(lines, table, line(&p, k))
			}
		case unstable.KeyValue:
			keyValue(&p, lines, append([]string(nil), table...), e)
		}
	}
	return lines
}

// keyValue marks a key = value of the table at prefix, and the keys of
// an inline table as its value.
func keyValue(p *unstable.Parser, lines map[string]int, prefix []string, e *unstable.Node) {
	key := prefix
	it := e.Key()
	for it.Next() {
		k := it.Node()
		key = append(key, string(k.Data))
		mark(lines, key, line(p, k))
	}
	v := e.Value()
	if v.Kind != unstable.InlineTable {
		return
	}
	kids := v.Children()
	for kids.Next() {
		if n := kids.Node(); n.Kind == unstable.KeyValue {
			keyValue(p, lines, append([]string(nil), key...), n)
		}
	}
}

func mark(lines map[string]int, key []string, n int) {
	name := dotted(key)
	if _, ok := lines[name]; !ok && n > 0 {
		lines[name] = n
	}
}

// line is the line a key's node starts on; 0 when it has no place in
// the document.
func line(p *unstable.Parser, n *unstable.Node) int {
	if n.Raw.Length == 0 && n.Raw.Offset == 0 {
		return 0
	}
	return p.Shape(n.Raw).Start.Line
}
