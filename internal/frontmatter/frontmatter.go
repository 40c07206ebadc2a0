// Package frontmatter reads the YAML front matter that opens a Markdown
// file, as the Agent Skills format writes a SKILL.md's: the lines between
// a first line of "---" and the next "---" (or "..."), read by a YAML
// parser (gopkg.in/yaml.v3), never by rules of our own. Link Harness's
// prompt and Link Memory both read skills through it, so a skill means
// the same to each.
package frontmatter

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Max is the most of a file's start Read looks at for its front matter.
const Max = 64 << 10

// Read is the top-level keys of text's front matter whose values are
// scalars (a string, a number, a boolean), each as its text; a nested
// value (a list, a mapping) is left out. A byte-order mark and CRLF line
// ends are taken as the format allows. A text with no front matter, one
// never closed, or one that isn't YAML is an error saying which.
func Read(text string) (map[string]string, error) {
	if len(text) > Max {
		text = text[:Max]
	}
	text = strings.TrimPrefix(text, "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	first, rest, _ := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return nil, errors.New("it has no front matter (a first line of ---)")
	}
	var body strings.Builder
	closed := false
	for _, l := range strings.Split(rest, "\n") {
		if t := strings.TrimRight(l, " \t"); t == "---" || t == "..." {
			closed = true
			break
		}
		body.WriteString(l)
		body.WriteByte('\n')
	}
	if !closed {
		return nil, fmt.Errorf("its front matter is never closed (a line of --- within its first %d KB)", Max>>10)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(body.String()), &doc); err != nil {
		return nil, fmt.Errorf("its front matter is not YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	out := map[string]string{}
	if len(doc.Content) == 0 {
		return out, nil // empty
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, errors.New("its front matter is not a mapping of keys to values")
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			continue
		}
		out[k.Value] = v.Value
	}
	return out, nil
}
