package harness

import (
	"context"
	"log/slog"

	"github.com/lnk-dev/link/harness/prompt"
	"github.com/lnk-dev/link/model"
)

// system is the turn's system prompt for the model name with tools
// offered: composed from the agent's files and settings once for each
// hold of the lease (the turn's start), and again when the model or the
// tools offered differ (a fallback model is sent its own instructions),
// or after recompose (a note saved). Within a turn it is the same bytes
// round after round, so the provider's cache holds.
func (t *turn) system(ctx context.Context, name string, tools []model.Tool) ([]model.Section, error) {
	key := systemKey(name, tools)
	if t.sys != nil && t.sysKey == key {
		return t.sys, nil
	}
	var texts []model.ToolText
	if in, ok := t.with.tools.(Instructor); ok {
		texts = in.Instructions(t.c.agent, tools)
	}
	p, err := t.with.prompts.Compose(ctx, prompt.Turn{
		Agent: t.c.agent,
		Model: name,
		Tools: texts,
		Environment: prompt.Env{
			FilesFolder: t.c.paths.Files(),
			Connections: t.c.settings.Connections,
		},
		Zone:     t.with.clock.zone.String(),
		Settings: t.c.settings.Instructions,
	})
	if err != nil {
		return nil, err
	}
	for _, e := range p.Problems {
		t.with.log.LogAttrs(ctx, slog.LevelWarn, "left out of the prompt", slog.String("agent", t.c.agent), slog.String("err", e.Error()))
	}
	t.sys, t.sysKey = p.System(), key
	return t.sys, nil
}

// recompose makes the next round compose the system prompt again: a
// file it is made of changed (a note saved).
func (t *turn) recompose() { t.sys = nil }

// systemKey is what a composed system prompt depends on in a turn beside
// the agent's files: the model and the tools offered.
func systemKey(name string, tools []model.Tool) string {
	n := len(name)
	for _, tl := range tools {
		n += len(tl.Name) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, name...)
	for _, tl := range tools {
		b = append(b, 0)
		b = append(b, tl.Name...)
	}
	return string(b)
}
