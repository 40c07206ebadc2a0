package chatterm

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/glamour"
	"github.com/muesli/termenv"
)

// markdown renders an answer's Markdown for the terminal with glamour,
// a block at a time: a streamed answer is shown block by block, each once
// it is whole, so nothing shown is ever drawn again.
type markdown struct {
	style string // glamour's standard style: dark, or notty without colour
	color termenv.Profile
	width int // the width the renderer wraps at
	r     *glamour.TermRenderer
}

// newMarkdown renders in colour unless noColor (NO_COLOR is set).
func newMarkdown(noColor bool) *markdown {
	if noColor {
		return &markdown{style: "notty", color: termenv.Ascii}
	}
	return &markdown{style: "dark", color: termenv.ANSI256}
}

// render is text's Markdown as the terminal shows it, wrapped to width
// columns, without the blank lines glamour puts around a document or the
// spaces it pads each line with.
func (m *markdown) render(text string, width int) string {
	if m.r == nil || m.width != width {
		r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(m.style), glamour.WithColorProfile(m.color), glamour.WithWordWrap(max(width-4, 20)))
		if err != nil {
			return text
		}
		m.r, m.width = r, width
	}
	out, err := m.r.Render(text)
	if err != nil {
		return text
	}
	return tidy(out)
}

// padding is what glamour ends a line with to fill its width: spaces,
// each maybe in its own colour.
var padding = regexp.MustCompile(`(?:\x1b\[[0-9;]*m| )+$`)

// tidy cuts each line's padding and the blank lines at both ends.
func tidy(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.Contains(l, "\x1b[") {
			if cut := padding.ReplaceAllString(l, ""); cut != l {
				l = cut + "\x1b[0m"
			}
		} else {
			l = strings.TrimRight(l, " ")
		}
		lines[i] = l
	}
	blank := func(l string) bool { return strings.TrimSpace(padding.ReplaceAllString(l, "")) == "" }
	for len(lines) > 0 && blank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// splitDone splits streamed Markdown after its last whole block: done
// ends at a blank line outside a fenced code block, and rest is the
// block still being written. done is "" while no block is whole.
func splitDone(text string) (done, rest string) {
	cut := 0
	fence := ""
	content := false
	for i := 0; i < len(text); {
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			break // the last line isn't whole yet
		}
		line := text[i : i+end]
		i += end + 1
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" ") == "" {
				fence = ""
			}
		case len(line)-len(trimmed) < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			content = true
		case strings.TrimSpace(line) == "":
			if content {
				cut = i
			}
		default:
			content = true
		}
	}
	return text[:cut], text[cut:]
}
