package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/router"
	"github.com/lnk-dev/link/store/transcript"
)

var _ acp.StateKeeper = (*Harness)(nil)

// ExportState answers _link/state/export for agent from its store: each
// conversation p names (every one when none), read through the store's
// router between turns (under the conversation's lease, waited for up to
// StateWait), as a conversation of the state document: each message a
// user entry (its sender kept), each answer with text an agent entry.
// A conversation that can't be read (its files corrupt, its folder or a
// file of it a symbolic link, too large, its driver failing) is named in the document's Failed with why,
// and the others are given. Tool calls, their answers, thinking,
// summaries and settings stay behind (docs/agent-state.md).
func (h *Harness) ExportState(ctx context.Context, agent string, p contract.StateExportParams) (contract.StateDocument, error) {
	doc := contract.StateDocument{Version: contract.StateVersion, Conversations: []contract.StateConversation{}}
	a, err := h.agent(ctx, agent)
	if err != nil {
		return doc, err
	}
	threads := p.Threads
	if len(threads) == 0 {
		var links []string
		if threads, links, err = router.ListThreads(ctx, a.paths); err != nil {
			return doc, h.stateFailed(ctx, agent, "export", err)
		}
		// A conversation whose folder is a link is named, never read
		// through it: whoever exports must learn it was left out.
		for _, thread := range links {
			h.exportFailed(ctx, &doc, a.paths, thread, errFolderLink)
		}
	}
	size := 0
	for _, thread := range threads {
		if err := contract.CheckThread(thread); err != nil {
			h.exportFailed(ctx, &doc, a.paths, thread, err)
			continue
		}
		c, err := h.open(ctx, agent, thread)
		if err != nil {
			return doc, err
		}
		var events []store.Event
		err = h.betweenTurns(ctx, c, func(holder string) error {
			var err error
			events, err = c.reader().Read(ctx, thread, 1)
			return err
		})
		var tr errTurnsRun
		if errors.As(err, &tr) || ctx.Err() != nil {
			return doc, h.stateFailed(ctx, agent, "export", err)
		}
		if err != nil {
			h.exportFailed(ctx, &doc, a.paths, thread, err)
			continue
		}
		conv := contract.StateConversation{Thread: thread, Entries: entriesOf(events)}
		if len(conv.Entries) == 0 {
			continue
		}
		for _, e := range conv.Entries {
			size += len(e.Text) + 128
		}
		if size > contract.MaxStateDocument {
			return doc, &contract.RuleError{Field: "export", Rule: fmt.Sprintf("the conversations asked for hold more than a state document's %d bytes: export fewer threads at a time", contract.MaxStateDocument)}
		}
		doc.Conversations = append(doc.Conversations, conv)
	}
	return doc, nil
}

// errFolderLink is why an export of every conversation leaves out one
// whose folder is a symbolic link (router.ListThreads).
var errFolderLink = errors.New("its conversation folder is a symbolic link, refused: never followed")

// exportFailed names thread in doc's failed, with why its conversation
// couldn't be read (the agent's home taken out of it, so it names no
// path of the machine; at most 1,000 bytes), and logs it: one
// conversation's bad files don't fail the export of the others.
func (h *Harness) exportFailed(ctx context.Context, doc *contract.StateDocument, p store.Paths, thread string, err error) {
	h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "an export could not read a conversation", slog.String("agent", p.Agent), slog.String("thread", thread), slog.String("err", err.Error()))
	why := err.Error()
	if p.Root != "" {
		why = strings.ReplaceAll(why, p.Root+string(filepath.Separator), "")
		why = strings.ReplaceAll(why, p.Root, ".")
	}
	if len(why) > 1000 {
		why = strings.ToValidUTF8(why[:1000], "")
	}
	if doc.Failed == nil {
		doc.Failed = map[string]string{}
	}
	doc.Failed[thread] = why
}

// entriesOf is what was said in events: each message a user entry, each
// answer with text an agent entry.
func entriesOf(events []store.Event) []contract.StateEntry {
	var out []contract.StateEntry
	for _, e := range events {
		var en contract.StateEntry
		switch {
		case e.Kind == store.KindMessage:
			text := e.Text
			for _, p := range e.Parts {
				label := "[" + p.Type
				if p.Name != "" {
					label += ": " + p.Name
				}
				text = strings.TrimLeft(text+"\n"+label+"]", "\n")
			}
			en = contract.StateEntry{Role: contract.RoleUser, Text: text, From: e.From, FromName: e.FromName}
		case e.Kind == store.KindAnswer && e.Text != "":
			en = contract.StateEntry{Role: contract.RoleAgent, Text: e.Text}
		default:
			continue
		}
		if en.Text == "" {
			continue
		}
		if !e.Time.IsZero() {
			t := e.Time
			en.Time = &t
		}
		out = append(out, en)
	}
	return out
}

// ImportState answers _link/state/import for agent into its store: each
// conversation of doc becomes one, under its old thread when the agent
// has no conversation there, else under a new link:import-N, its entries
// written as messages and answers (an entry's time kept), between turns;
// the copy for people is made of it.
func (h *Harness) ImportState(ctx context.Context, agent string, doc contract.StateDocument) (contract.StateImportResult, error) {
	res := contract.StateImportResult{Conversations: []contract.ImportedConversation{}}
	a, err := h.agent(ctx, agent)
	if err != nil {
		return res, err
	}
	taken := map[string]bool{}
	for _, sc := range doc.Conversations {
		thread, err := h.importOne(ctx, agent, a, sc, taken)
		if err != nil {
			return res, h.stateFailed(ctx, agent, "import", fmt.Errorf("%s: %w", sc.Thread, err))
		}
		taken[thread] = true
		res.Conversations = append(res.Conversations, contract.ImportedConversation{From: sc.Thread, Thread: thread})
	}
	return res, nil
}

// importOne writes one conversation of an import, under a thread with no
// conversation, and returns that thread. A thread whose conversation is
// the import's own, event for event (an import asked again after it
// stopped at a later conversation), is that thread, nothing written.
func (h *Harness) importOne(ctx context.Context, agent string, a *agentStore, sc contract.StateConversation, taken map[string]bool) (string, error) {
	for n := 0; n <= contract.MaxStateConversations*2; n++ {
		thread := sc.Thread
		if n > 0 {
			thread = "link:import-" + strconv.Itoa(n)
		}
		if taken[thread] {
			continue
		}
		c, err := h.open(ctx, agent, thread)
		if err != nil {
			return "", err
		}
		ours, wrote := false, false
		err = h.betweenTurns(ctx, c, func(holder string) error {
			next, err := store.Next(ctx, c.keeper(), thread)
			if err != nil {
				return err
			}
			if next != 1 {
				// It has a conversation: this one imported already, or
				// another, and then the next name.
				if next == int64(len(sc.Entries))+1 {
					had, err := c.keeper().Read(ctx, thread, 1)
					if err != nil {
						return err
					}
					ours = importedAlready(had, sc.Entries)
				}
				return nil
			}
			now := h.cfg.Now().UTC()
			for i, en := range sc.Entries {
				if err := c.keeper().Append(ctx, thread, importEvent(i, en, now)); err != nil {
					return err
				}
				if i == 0 {
					if err := c.pinned.Begun(); err != nil {
						return err
					}
				}
			}
			ours, wrote = true, true
			return nil
		})
		if err != nil {
			return "", err
		}
		if wrote {
			if err := transcript.Make(ctx, a.paths, c.reader(), thread); err != nil {
				h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "make the copy of an import", slog.String("thread", thread), slog.String("err", err.Error()))
			}
		}
		if ours {
			return thread, nil
		}
	}
	return "", errors.New("no free thread to import it under")
}

// importEvent is an import's entry i as the event it is written as: a
// message or an answer, numbered i+1, at its time or else now.
func importEvent(i int, en contract.StateEntry, now time.Time) store.Event {
	e := store.Event{Seq: int64(i + 1), Time: now, Text: en.Text}
	if en.Time != nil {
		e.Time = en.Time.UTC()
	}
	if en.Role == contract.RoleUser {
		e.Kind, e.From, e.FromName = store.KindMessage, en.From, en.FromName
	} else {
		e.Kind = store.KindAnswer
	}
	return e
}

// importedAlready says whether a conversation's events are entries as an
// import writes them, one for one: the same conversation, imported
// before. An entry without a time matches an event of any time.
func importedAlready(had []store.Event, entries []contract.StateEntry) bool {
	if len(had) != len(entries) {
		return false
	}
	for i, e := range had {
		want := importEvent(i, entries[i], e.Time)
		if e.Seq != want.Seq || e.Kind != want.Kind || e.Text != want.Text || e.From != want.From || e.FromName != want.FromName || !e.Time.Equal(want.Time) {
			return false
		}
	}
	return true
}

// betweenTurns runs fn holding c's lease, so no turn runs in the
// conversation meanwhile: a lease held by a running turn is waited for,
// up to StateWait, and then the state method is refused.
func (h *Harness) betweenTurns(ctx context.Context, c *conv, fn func(holder string) error) error {
	holder := "link-harness-state-" + h.holder()
	deadline := time.Now().Add(h.cfg.StateWait)
	wait := 10 * time.Millisecond
	for {
		err := c.lease(ctx, holder, h.cfg.LeaseTTL)
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrLeaseHeld) {
			return err
		}
		if time.Now().Add(wait).After(deadline) {
			return errTurnsRun{h.cfg.StateWait}
		}
		// The lease is another process's as much as this one's: nothing
		// tells its end, so it is looked at again.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, time.Second)
	}
	defer c.release(context.WithoutCancel(ctx), holder)
	return fn(holder)
}

// errTurnsRun refuses a state method while a turn still runs after the
// wait.
type errTurnsRun struct{ waited time.Duration }

func (e errTurnsRun) Error() string {
	return fmt.Sprintf("agent state is exported and imported only between turns: a turn still ran after %s", e.waited)
}

// stateFailed logs why an export or import of agent failed, and returns
// what the client may be told: a refusal as it is, else words naming no
// path of the machine.
func (h *Harness) stateFailed(ctx context.Context, agent, what string, err error) error {
	var re *contract.RuleError
	var tr errTurnsRun
	if errors.As(err, &re) || errors.As(err, &tr) {
		return err
	}
	h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, what, slog.String("agent", agent), slog.String("err", err.Error()))
	return fmt.Errorf("%s: the agent's store failed; its log says why", what)
}
