package harness

import (
	"context"
	"encoding/base64"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/router"
)

// What an editor is shown of the agent's conversations (acp.Options.Editor).
const (
	// listPage is how many sessions one session/list answer gives.
	listPage = 100
	// titleLook is how many of a conversation's latest events its title
	// is looked for in: past them, the thread names it.
	titleLook = 32
	// titleRunes bounds a title.
	titleRunes = 80
	// configModel is the id of the model's config option.
	configModel = "model"
)

var (
	_ acp.SessionLister = (*Harness)(nil)
	_ acp.Configurer    = (*Harness)(nil)
	_ acp.Replayer      = (*Harness)(nil)
)

// maxReplay bounds the text a session/load replays: the latest entries
// of the conversation's window that fit.
const maxReplay = 4 << 20

// ListSessions gives agent's conversations for session/list, a page of
// listPage at a time in the order of their threads' names, each titled
// as titleOf says and dated by its latest event. The cursor is the last
// thread of the page before, encoded; a conversation that can't be read
// is listed by its thread alone, and logged.
func (h *Harness) ListSessions(ctx context.Context, agent, cursor string) (acp.ListSessionsResult, error) {
	var res acp.ListSessionsResult
	after, err := threadOfCursor(cursor)
	if err != nil {
		return res, err
	}
	a, err := h.agent(ctx, agent)
	if err != nil {
		return res, err
	}
	set, err := h.cfg.Settings(ctx, a.paths)
	if err != nil {
		return res, err
	}
	r, err := router.New(a.paths, set.Conversations, a.drivers)
	if err != nil {
		return res, err
	}
	threads, err := router.Threads(ctx, a.paths)
	if err != nil {
		return res, err
	}
	i := sort.SearchStrings(threads, after)
	if i < len(threads) && threads[i] == after {
		i++
	}
	page := threads[i:min(i+listPage, len(threads))]
	for _, thread := range page {
		info := acp.SessionInfo{SessionID: thread, Title: thread}
		events, err := store.Latest(ctx, r, thread, titleLook)
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "list a conversation", slog.String("agent", agent), slog.String("thread", thread), slog.String("err", err.Error()))
		}
		if len(events) == 0 && err == nil {
			continue // a folder with no conversation in it yet
		}
		if title, updated := titleOf(events); title != "" {
			info.Title = title
			info.UpdatedAt = updated.UTC().Format(time.RFC3339)
		}
		res.Sessions = append(res.Sessions, info)
	}
	if i+len(page) < len(threads) && len(page) > 0 {
		res.NextCursor = cursorOf(page[len(page)-1])
	}
	return res, nil
}

// cursorOf is the cursor of the sessions after thread's.
func cursorOf(thread string) string { return base64.RawURLEncoding.EncodeToString([]byte(thread)) }

// threadOfCursor is the thread a cursor follows ("" for none, the first
// page), or a rule error for a cursor cursorOf never gave.
func threadOfCursor(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || contract.CheckThread(string(b)) != nil || cursorOf(string(b)) != cursor {
		return "", &contract.RuleError{Field: "cursor", Rule: "a cursor is one a session/list answer gave, as it gave it"}
	}
	return string(b), nil
}

// titleOf is a conversation's title as its latest events say, and when
// it was last active: the first line of its latest message, at most
// titleRunes long, after its sender's name when it has one; "" when none
// of events is a message.
func titleOf(events []store.Event) (string, time.Time) {
	var updated time.Time
	if n := len(events); n > 0 {
		updated = events[n-1].Time
	}
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Kind != store.KindMessage {
			continue
		}
		text := strings.TrimSpace(e.Text)
		if line, _, ok := strings.Cut(text, "\n"); ok {
			text = strings.TrimSpace(line)
		}
		if text == "" && len(e.Parts) > 0 {
			text = "[" + e.Parts[0].Type + "]"
		}
		if e.FromName != "" {
			text = e.FromName + ": " + text
		}
		if r := []rune(text); len(r) > titleRunes {
			text = strings.TrimRightFunc(string(r[:titleRunes-1]), unicode.IsSpace) + "…"
		}
		return text, updated
	}
	return "", updated
}

// ConfigOptions gives thread's config options: its model, a select of
// the models its agent names (its model, aliases and fallbacks, each
// served by a provider) with the one it runs on now current; none when
// no model is named anywhere.
func (h *Harness) ConfigOptions(ctx context.Context, agent, thread string) ([]acp.ConfigOption, error) {
	t, err := h.readConv(ctx, agent, thread)
	if err != nil {
		return nil, err
	}
	return h.modelOption(t.c, t.modelName()), nil
}

// readConv reads thread's window, as a turn would, outside any turn: for
// what an editor is shown of it.
func (h *Harness) readConv(ctx context.Context, agent, thread string) (*turn, error) {
	c, err := h.open(ctx, agent, thread)
	if err != nil {
		return nil, err
	}
	t := &turn{with: h.with, c: c, reader: reader{c: c, hist: h.hist}}
	if err := t.refresh(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// History is what was said in thread's window (what its model is sent
// now), as an export gives it (entriesOf): each message a user entry,
// each answer with text an agent entry, the latest that fit in maxReplay
// bytes of text, for session/load to replay.
func (h *Harness) History(ctx context.Context, agent, thread string) ([]contract.StateEntry, error) {
	t, err := h.readConv(ctx, agent, thread)
	if err != nil {
		return nil, err
	}
	entries := entriesOf(t.events)
	size := 0
	for i := len(entries) - 1; i >= 0; i-- {
		if size += len(entries[i].Text); size > maxReplay {
			return entries[i+1:], nil
		}
	}
	return entries, nil
}

// modelOption is the model's config option of c, running on current.
func (h *Harness) modelOption(c *conv, current string) []acp.ConfigOption {
	if current == "" {
		return nil
	}
	set := c.settings
	names := []string{current}
	add := func(asked string) {
		name, _, err := h.resolveModel(c, asked)
		if err == nil && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	add(set.Model)
	aliases := make([]string, 0, len(set.Aliases))
	for a := range set.Aliases {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	for _, a := range aliases {
		add(a)
	}
	for _, f := range set.Fallbacks {
		add(f)
	}
	opt := acp.ConfigOption{ID: configModel, Name: "Model", Description: "The model this conversation runs on (/model:set)", Category: acp.CategoryModel, Type: acp.ConfigSelect, CurrentValue: current}
	for _, name := range names {
		label := name
		var short []string
		for _, a := range aliases {
			if set.Alias(a) == name {
				short = append(short, a)
			}
		}
		if len(short) > 0 {
			label = strings.Join(short, ", ") + " (" + name + ")"
		}
		opt.Options = append(opt.Options, acp.ConfigValue{Value: name, Name: label})
	}
	return []acp.ConfigOption{opt}
}

// SetConfigOption sets thread's model as /model:set does (a model_set
// event, under the conversation's lease), to one of the model option's
// values, and gives the options as they hold then.
func (h *Harness) SetConfigOption(ctx context.Context, agent, thread, id, value string) ([]acp.ConfigOption, error) {
	if id != configModel {
		return nil, &contract.RuleError{Field: "configId", Rule: "the config option a session has is " + configModel}
	}
	opts, err := h.ConfigOptions(ctx, agent, thread)
	if err != nil {
		return nil, err
	}
	if len(opts) == 0 || !slices.ContainsFunc(opts[0].Options, func(v acp.ConfigValue) bool { return v.Value == value }) {
		return nil, &contract.RuleError{Field: "value", Rule: "a model is set to one of the model option's values"}
	}
	c, err := h.open(ctx, agent, thread)
	if err != nil {
		return nil, err
	}
	cmd := &command{name: cmdModelSet, arg: value}
	if cmd.model, cmd.provider, err = h.resolveModel(c, value); err != nil {
		return nil, err
	}
	if _, err := h.runCommand(ctx, c, cmd); err != nil {
		return nil, err
	}
	return h.ConfigOptions(ctx, agent, thread)
}

// report tells an editor waiting for the turn's answer how its session
// stands (acp.Reporter): the context the window holds now, its size and
// what the turn cost, then the conversation's title.
func (t *turn) report(ctx context.Context) {
	a := t.out
	if a == nil || a.callerGone() {
		return
	}
	r, ok := a.s.(acp.Reporter)
	if !ok || !r.Reporting() {
		return
	}
	used := t.lastUsage.In + t.lastUsage.CacheRead + t.lastUsage.CacheWrite + t.lastUsage.Out
	if used == 0 { // the provider said nothing: the window's rough count
		used = int64(t.instructions + t.view(t.cp).tokens())
	}
	r.Usage(a.ctx, acp.Usage{Used: used, Size: int64(t.windowSize), CostUSD: t.cost})
	if title, updated := titleOf(t.events); title != "" {
		r.SessionInfo(a.ctx, title, updated)
	}
}
