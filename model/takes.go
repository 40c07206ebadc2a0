package model

import (
	"encoding/base64"
	"fmt"
)

// Modality is a kind of data a model may take beside text.
type Modality string

// The modalities beside text.
const (
	ModalityImage    Modality = "image"
	ModalityAudio    Modality = "audio"
	ModalityDocument Modality = "document" // a PDF or other document as its bytes
)

// Inputs says, for each modality it names, whether a model takes it.
type Inputs map[Modality]bool

// makerInputs is what Link knows each maker's models take, as data. A maker
// not here, and a runtime's models (ollama/...), take none: they are told
// in text what was sent, which never fails, until an override says more.
var makerInputs = map[string]Inputs{
	"anthropic": {ModalityImage: true, ModalityDocument: true},
	"openai":    {ModalityImage: true, ModalityDocument: true},
	"google":    {ModalityImage: true, ModalityAudio: true, ModalityDocument: true},
	"x-ai":      {ModalityImage: true},
	"mistralai": {ModalityImage: true},
}

// Takes reports whether the model named takes m as data. overrides, keyed
// by a model's whole name or by its maker (from the facts file), win over
// Link's table field by field: the whole name's first, then the maker's,
// then the table's. A bare claude-... name is Anthropic's.
func Takes(name string, m Modality, overrides map[string]Inputs) bool {
	maker, model := Parse(name)
	if maker == "" && len(model) > 7 && model[:7] == "claude-" {
		maker = "anthropic"
	}
	if v, ok := overrides[name][m]; ok {
		return v
	}
	if maker != "" {
		if v, ok := overrides[maker][m]; ok {
			return v
		}
	}
	return makerInputs[maker][m]
}

// PartModality gives the modality a part needs; ok is false for a part any
// model takes (text, tool calls and answers, thinking, and a document
// given as its text).
func PartModality(p Part) (m Modality, ok bool) {
	switch p.Kind {
	case KindImage:
		return ModalityImage, true
	case KindAudio:
		return ModalityAudio, true
	case KindDocument:
		if p.Data != "" {
			return ModalityDocument, true
		}
	}
	return "", false
}

// Substitute returns msgs with each part the model doesn't take (takes
// says false for its modality) replaced by a text part saying what was
// sent (Unsent). A document given as its text is kept. msgs is unchanged:
// when a part is replaced, the messages and that message's parts are
// copied first; when none is, msgs itself is returned, nothing copied
// (its capacity cut to its length, so an append to it copies as to a copy).
func Substitute(msgs []Message, takes func(Modality) bool) []Message {
	if len(msgs) == 0 {
		return []Message{} // as before: empty, not nil
	}
	out := msgs[:len(msgs):len(msgs)]
	fresh := false
	for i, msg := range msgs {
		copied := false
		for j, p := range msg.Parts {
			m, ok := PartModality(p)
			if !ok || takes(m) {
				continue
			}
			if !fresh {
				out, fresh = append([]Message(nil), msgs...), true
			}
			if !copied {
				out[i].Parts = append([]Part(nil), msg.Parts...)
				copied = true
			}
			out[i].Parts[j] = Text(Unsent(p))
		}
	}
	return out
}

// Unsent is the text a model is told in place of a part it doesn't take:
// what was sent, its type, name and size.
func Unsent(p Part) string {
	size := base64.StdEncoding.DecodedLen(len(p.Data))
	what := string(p.Kind)
	if p.Kind == KindAudio {
		what = "audio file"
	}
	desc := what
	if p.MimeType != "" {
		desc += " (" + p.MimeType
		if size > 0 {
			desc += ", " + humanBytes(size)
		}
		desc += ")"
	}
	if p.Name != "" {
		desc += fmt.Sprintf(" named %q", p.Name)
	}
	article := "A"
	if what[0] == 'a' || what[0] == 'i' {
		article = "An"
	}
	return fmt.Sprintf("[%s %s was sent here. This model doesn't take %ss, so it wasn't passed on.]", article, desc, what)
}

func humanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
