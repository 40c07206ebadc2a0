// Package redact takes an address that carries a secret out of text
// before the text is logged or told: Link's tools are reached at URLs
// whose path (or query, or user info) is their secret, such as Link
// Memory's http://127.0.0.1:<port>/mcp/<secret>, and an error from a
// client of one, or from an agent given one, may quote it.
package redact

import (
	"net/url"
	"strings"
)

// Hidden is what stands in text where an address, or a part of one, was.
const Hidden = "<address>"

// minSegment is the shortest path segment taken out alone: a secret is
// longer (Link Memory's is 43 characters), a tool's name or "mcp" is
// mostly shorter, and is left to be read.
const minSegment = 16

// Address is text with addr taken out, and each part of addr that may
// carry a secret wherever it stands alone: its host and path, its path,
// its query, its user info, and each segment of its path of 16
// characters or more (so a quote with its slashes escaped, \/mcp\/..., or
// its secret alone is caught too). Everything else of text is kept.
func Address(text, addr string) string {
	if addr == "" {
		return text
	}
	text = strings.ReplaceAll(text, addr, Hidden)
	u, err := url.Parse(addr)
	if err != nil {
		return text
	}
	for _, part := range []string{u.String(), u.Host + u.Path, u.Path, u.RawQuery, u.User.String()} {
		if len(part) > 1 {
			text = strings.ReplaceAll(text, part, Hidden)
		}
	}
	for seg := range strings.SplitSeq(u.Path, "/") {
		if len(seg) >= minSegment {
			text = strings.ReplaceAll(text, seg, Hidden)
		}
	}
	return text
}

// Addresses is text with each of addrs taken out as Address takes one.
func Addresses(text string, addrs ...string) string {
	for _, a := range addrs {
		text = Address(text, a)
	}
	return text
}
