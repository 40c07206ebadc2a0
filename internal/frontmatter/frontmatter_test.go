package frontmatter

import (
	"strings"
	"testing"
)

// Each form of YAML a SKILL.md's front matter is written in reads as
// YAML reads it; a file without, one never closed, or one that isn't
// YAML, is refused saying which.
func TestRead(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       map[string]string
		err        string
	}{
		{"plain", "---\nname: pdf\ndescription: Reads PDFs.\n---\nbody", map[string]string{"name": "pdf", "description": "Reads PDFs."}, ""},
		{"crlf and bom", "\ufeff---\r\nname: pdf\r\ndescription: x\r\n---\r\n", map[string]string{"name": "pdf", "description": "x"}, ""},
		{"folded plain", "---\ndescription: one\n  two\n   three\n---", map[string]string{"description": "one two three"}, ""},
		{"double quoted", "---\ndescription: \"a \\\"b\\\" c: d\"\n---", map[string]string{"description": `a "b" c: d`}, ""},
		{"single quoted", "---\ndescription: 'it''s # not a comment'\n---", map[string]string{"description": "it's # not a comment"}, ""},
		{"comment", "---\nname: pdf # the name\n---", map[string]string{"name": "pdf"}, ""},
		{"literal block", "---\ndescription: |\n  line one\n  line two\nname: x\n---", map[string]string{"description": "line one\nline two\n", "name": "x"}, ""},
		{"folded block", "---\ndescription: >-\n  line one\n  line two\n---", map[string]string{"description": "line one line two"}, ""},
		{"nested left out", "---\nmetadata:\n  name: inner\nname: outer\n---", map[string]string{"name": "outer"}, ""},
		{"a number", "---\nversion: 2\n---", map[string]string{"version": "2"}, ""},
		{"ended by dots", "---\nname: pdf\n...\nbody", map[string]string{"name": "pdf"}, ""},
		{"no front matter", "# pdf\nname: pdf", nil, "no front matter"},
		{"never closed", "---\nname: pdf\n", nil, "never closed"},
		{"not yaml", "---\nname: [pdf\n---", nil, "not YAML"},
		{"not a mapping", "---\n- a\n- b\n---", nil, "not a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Read(c.text)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// A YAML document made to grow by its aliases (a billion laughs) is
// refused, not expanded; and Read never looks past Max bytes.
func TestReadBounded(t *testing.T) {
	bomb := "---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nname: x\n---\n"
	if got, err := Read(bomb); err == nil && got["name"] != "x" {
		t.Fatalf("%v %v", got, err)
	}
	long := "---\nname: x\ndescription: " + strings.Repeat("y", Max) + "\n---\n"
	if _, err := Read(long); err == nil || !strings.Contains(err.Error(), "never closed") {
		t.Fatalf("front matter past %d bytes: %v", Max, err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add("---\nname: pdf\ndescription: >\n  a\n  b\n---\n")
	f.Add("---\ndescription: \"x\\\"\"\n---")
	f.Add("---\ndescription: 'it''s'\n---")
	f.Add("---\na: &x 1\nb: *x\n---")
	f.Fuzz(func(t *testing.T, text string) {
		fm, err := Read(text)
		if err != nil {
			return
		}
		if !strings.HasPrefix(strings.TrimPrefix(strings.ReplaceAll(text, "\r\n", "\n"), "\ufeff"), "---") {
			t.Fatalf("front matter read from a text not opening with ---: %q", fm)
		}
	})
}
