package harness

import (
	"strconv"
	"strings"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/store"
)

// HeaderLayout is how a message's header gives its time: the machine's
// local time, where a personal agent's owner is, with its zone.
const HeaderLayout = "Mon 2 Jan 2006 15:04 MST"

// Header is the line a message is sent to the model under: its date and
// local time, its connection, and, for the owner's alone, that the owner
// is speaking: a message from others says who on its own first line,
// its words quoted (Quoted). It is stored with the message, so the
// prompt reads the same at every later turn.
//
//	[Mon 30 Nov 2026 10:15 CET, telegram, your owner]
//	[Mon 30 Nov 2026 10:15 CET, telegram]
func Header(at time.Time, loc *time.Location, thread string, owner bool) string {
	var b strings.Builder
	b.WriteByte('[')
	b.WriteString(at.In(loc).Format(HeaderLayout))
	b.WriteString(", ")
	b.WriteString(connection(thread))
	if owner {
		b.WriteString(", your owner")
	}
	b.WriteByte(']')
	return b.String()
}

// Quoted is a message from others as the model reads it: a line saying
// who wrote it (their name, who they are, and the hops that led to it),
// then its lines quoted, so its words are never read as the owner's.
//
//	Grace (person:telegram:7) wrote:
//	> send me the photo
//	agent:helper wrote, 2 hops away:
//	> done
func Quoted(from, fromName string, hops int, text string) string {
	var b strings.Builder
	if fromName != "" {
		b.WriteString(fromName)
		b.WriteString(" (")
		b.WriteString(from)
		b.WriteString(")")
	} else {
		b.WriteString(from)
	}
	b.WriteString(" wrote")
	switch {
	case hops == 1:
		b.WriteString(", 1 hop away")
	case hops > 1:
		b.WriteString(", ")
		b.WriteString(strconv.Itoa(hops))
		b.WriteString(" hops away")
	}
	b.WriteString(":")
	if text != "" {
		b.WriteString("\n")
		b.WriteString(quote(text))
	}
	return b.String()
}

// connection is a thread's connection: telegram of telegram:42, default
// of default.
func connection(thread string) string {
	conn, _, ok := strings.Cut(thread, ":")
	if !ok {
		return thread
	}
	return conn
}

// messageEvent is the event a prompt is stored as: who sent it, its
// header, its text (text blocks joined, each resource link said in
// words) and its attachments.
func messageEvent(p acp.Prompt, at time.Time, loc *time.Location) store.Event {
	e := store.Event{
		Kind:     store.KindMessage,
		From:     p.Link.From,
		FromName: p.Link.FromName,
		Hops:     p.Link.Hops,
		Header:   Header(at, loc, p.Thread, p.Link.From == ""),
	}
	var text []string
	for _, b := range p.Blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "image", "audio":
			e.Parts = append(e.Parts, store.Part{Type: b.Type, MimeType: b.MimeType, Data: b.Data})
		case "resource":
			if r := b.Resource; r != nil {
				e.Parts = append(e.Parts, store.Part{Type: "resource", MimeType: r.MimeType, Name: r.URI, Data: r.Blob, Text: r.Text})
			}
		case "resource_link":
			text = append(text, "[A link was sent: "+b.URI+"]")
		}
	}
	e.Text = strings.Join(text, "\n")
	return e
}

// quote marks each line of a message from others as quoted, so its words
// are never read as the owner's.
func quote(text string) string {
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n")
}
