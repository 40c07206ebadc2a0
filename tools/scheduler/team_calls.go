package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/tools/mcpserve"
)

// TeamInstructions is what the scheduler's initialize answer says of its
// subagents and teammates, for the prompt's tools section: short, as the
// scheduler's whole text is at most 2 KB (prompt.MaxToolText).
const TeamInstructions = `Subagents and teammates (their answers come back here later, as messages):
- start_task: a subagent does text in a conversation of its own (it sees nothing of this one: say all it needs), with your tools or fewer (memory__search, or memory for all its calls) and your model unless model names one; name carries on an earlier task's conversation. Its answers (the first, and any after its own tasks answer it) come as messages from task:<id>. Start several to work in parallel.
- list_tasks: this conversation's tasks and messages still waiting.
- message_teammate: text to another of your owner's agents (list_teammates); its reply comes as a message from agent:<name>.
- A few hops away, nothing more can be started or sent.`

// Names of the team's calls.
const (
	callStartTask       = "start_task"
	callListTasks       = "list_tasks"
	callMessageTeammate = "message_teammate"
	callListTeammates   = "list_teammates"
)

// AddTeamTools adds the team's calls to s: start_task, list_tasks,
// message_teammate and list_teammates.
func AddTeamTools(s *mcp.Server, t *Team) {
	mcp.AddTool(s, &mcp.Tool{Name: callStartTask, Description: "Start a subagent on a task, in a conversation of its own, with your tools or fewer and your model unless you name one. Answers at once with its id; its answer comes back here later as a message from task:<id>.", Annotations: &mcp.ToolAnnotations{DestructiveHint: teamPtr(false)}}, t.startTask)
	mcp.AddTool(s, &mcp.Tool{Name: callListTasks, Description: "List this conversation's tasks and messages to teammates still waiting for their answer.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.listTasks)
	mcp.AddTool(s, &mcp.Tool{Name: callMessageTeammate, Description: "Send a message to another of your owner's agents on this machine; its reply comes back here later as a message from agent:<its name>.", Annotations: &mcp.ToolAnnotations{DestructiveHint: teamPtr(false)}}, t.messageTeammate)
	mcp.AddTool(s, &mcp.Tool{Name: callListTeammates, Description: "List your owner's other agents on this machine, whom message_teammate reaches.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.listTeammates)
}

func teamPtr[T any](v T) *T { return &v }

// StartTaskIn is start_task's arguments.
type StartTaskIn struct {
	Text  string   `json:"text" jsonschema:"the whole task: the subagent sees nothing of this conversation"`
	Tools []string `json:"tools,omitempty" jsonschema:"the tools it may use, each one of yours (memory__search) or a tool's name for all of its calls (memory); none said: all of yours"`
	Model string   `json:"model,omitempty" jsonschema:"the model it runs on, a name or an alias; none said: yours"`
	Name  string   `json:"name,omitempty" jsonschema:"its conversation's name, link:task-<name> (lowercase letters, digits, '.', '_', '-'), to carry on an earlier task's conversation; none said: a new one"`
}

// MessageTeammateIn is message_teammate's arguments.
type MessageTeammateIn struct {
	Agent string `json:"agent" jsonschema:"the teammate's name, as list_teammates says it"`
	Text  string `json:"text" jsonschema:"the message"`
}

// NoIn is the arguments of a call that takes none.
type NoIn struct{}

// callMeta is what a call of Link Harness's says beside its arguments
// (harness/mcptools): the conversation it is made in and the hops of the
// message it answers (mcpserve.Origin), the tools the conversation has
// this turn and its model.
type callMeta struct {
	Thread string
	Hops   int
	Tools  *[]string // nil: not said
	Model  string
}

// The keys of a call's _meta the team reads beside mcpserve's.
const (
	metaThread = mcpserve.MetaThread
	metaHops   = mcpserve.MetaHops
	metaTools  = "link.local/tools"
	metaModel  = "link.local/model"
)

// parseCallMeta reads a call's _meta, refusing what breaks a rule: the
// conversation and hops as mcpserve.Origin reads them; tools a list of
// tools' names; model a model's.
func parseCallMeta(m map[string]any) (callMeta, error) {
	var c callMeta
	var err error
	if c.Thread, c.Hops, err = mcpserve.Origin(m); err != nil {
		return c, err
	}
	if v, ok := m[metaTools]; ok && v != nil {
		list, isList := v.([]any)
		if !isList || len(list) > contract.MaxTools {
			return c, fmt.Errorf("the call's _meta %s is a list of at most %d tools' names", metaTools, contract.MaxTools)
		}
		tools := make([]string, 0, len(list))
		for _, x := range list {
			name, isStr := x.(string)
			if !isStr {
				return c, fmt.Errorf("the call's _meta %s is a list of tools' names, each a string", metaTools)
			}
			if err := contract.CheckToolName(name); err != nil {
				return c, fmt.Errorf("the call's _meta %s: %w", metaTools, err)
			}
			tools = append(tools, name)
		}
		c.Tools = &tools
	}
	if v, ok := m[metaModel]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr {
			return c, fmt.Errorf("the call's _meta %s is a model's name", metaModel)
		}
		if err := contract.CheckModel(s); err != nil {
			return c, fmt.Errorf("the call's _meta %s: %w", metaModel, err)
		}
		c.Model = s
	}
	return c, nil
}

// teamRefused is a call's answer refusing it, naming the rule.
func teamRefused(format string, args ...any) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Refused: " + fmt.Sprintf(format, args...)}}}, nil, nil
}

// told is a call's text answer.
func told(format string, args ...any) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}, nil, nil
}

// checkText checks a task's or a message's text.
func checkText(text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return errors.New("text is the message: it isn't empty")
	case len(text) > MaxTaskText:
		return fmt.Errorf("text is at most %d bytes", MaxTaskText)
	case !utf8.ValidString(text):
		return errors.New("text is UTF-8")
	}
	return nil
}

// checkHops refuses a call whose message would be MaxHops or more away.
func checkHops(hops int) error {
	if hops+1 >= MaxHops {
		return fmt.Errorf("this conversation's message is %d hops away, and a message the scheduler sends is fewer than %d: it would be %d (two agents or tasks answering each other stop here)", hops, MaxHops, hops+1)
	}
	return nil
}

// taskTools is the tools a task asking for want gets, its parent having
// parent (link.local/tools): want's each, a whole tool's name (memory)
// standing for the parent's calls of it; none asked for is all the
// parent's. A tool the parent hasn't is refused, naming it.
func taskTools(parent *[]string, want []string) (*[]string, error) {
	if parent == nil {
		return nil, errors.New("a task gets its parent's tools or fewer, and this call doesn't say this conversation's (" + metaTools + "): it comes from a harness that isn't Link Harness")
	}
	if want == nil {
		out := append([]string{}, (*parent)...)
		return &out, nil
	}
	if len(want) > contract.MaxTools {
		return nil, fmt.Errorf("tools is at most %d names", contract.MaxTools)
	}
	out := []string{}
	add := func(n string) {
		for _, o := range out {
			if o == n {
				return
			}
		}
		out = append(out, n)
	}
	for _, w := range want {
		if err := contract.CheckToolName(w); err != nil {
			return nil, err
		}
		found := false
		for _, p := range *parent {
			if p == w || !strings.Contains(w, "__") && strings.HasPrefix(p, w+"__") {
				add(p)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("a task gets its parent's tools or fewer, and this conversation has no tool %.128s (it has %s)", w, listOrNone(*parent))
		}
	}
	return &out, nil
}

// listOrNone is names joined, or "none".
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func (t *Team) startTask(ctx context.Context, req *mcp.CallToolRequest, in StartTaskIn) (*mcp.CallToolResult, any, error) {
	meta, err := parseCallMeta(req.Params.Meta)
	if err != nil {
		return teamRefused("%v", err)
	}
	if err := checkText(in.Text); err != nil {
		return teamRefused("%v", err)
	}
	if err := checkHops(meta.Hops); err != nil {
		return teamRefused("%v", err)
	}
	tools, err := taskTools(meta.Tools, in.Tools)
	if err != nil {
		return teamRefused("%v", err)
	}
	model := meta.Model
	if in.Model != "" {
		if err := contract.CheckModel(in.Model); err != nil {
			return teamRefused("%v", err)
		}
		model = in.Model
	}
	id := newJobID()
	thread := "link:task-" + id
	if in.Name != "" {
		thread = "link:task-" + in.Name
		if err := contract.CheckThread(thread); err != nil {
			return teamRefused("a task's conversation is link:task-<name>, and %s: %v", thread, err)
		}
	}
	set, err := t.cfg.Settings(ctx)
	if err != nil {
		return teamRefused("the scheduler's settings don't read: %v", err)
	}
	j := &job{ID: id, Kind: kindTask, Parent: meta.Thread, Hops: meta.Hops, Thread: thread, Text: in.Text, Tools: tools, Model: model, Since: t.cfg.Now().UTC(), Stage: stageAsking}
	var over overLimit
	if err := t.add(j, set.MaxTasks); errors.As(err, &over) {
		return teamRefused("%v", err)
	} else if err != nil {
		return teamRefused("the task couldn't be kept: %v", err)
	}
	return told("Started task:%s in %s, with %d tools%s. Its answer comes back here as a message from task:%s.", id, thread, len(*tools), onModel(model), id)
}

// onModel says the model a task runs on.
func onModel(model string) string {
	if model == "" {
		return ""
	}
	return ", on " + model
}

func (t *Team) listTasks(_ context.Context, req *mcp.CallToolRequest, _ NoIn) (*mcp.CallToolResult, any, error) {
	meta, err := parseCallMeta(req.Params.Meta)
	if err != nil {
		return teamRefused("%v", err)
	}
	var b strings.Builder
	for _, j := range t.snapshot() {
		if j.Parent != meta.Thread {
			continue
		}
		state := "running"
		if j.Stage == stageAnswered {
			state = "answered, coming back"
		}
		fmt.Fprintf(&b, "%s (%s, since %s): %s\n", j.from(), state, j.Since.Format("2006-01-02 15:04:05 UTC"), firstLine(j.Text, 120))
	}
	if b.Len() == 0 {
		return told("Nothing of this conversation's is waiting for an answer.")
	}
	return told("%s", b.String())
}

// firstLine is text's first line, at most n bytes.
func firstLine(text string, n int) string {
	line, _, cut := strings.Cut(text, "\n")
	if len(line) > n {
		for n > 0 && !utf8RuneStart(line[n]) {
			n--
		}
		line, cut = line[:n], true
	}
	if cut {
		line += "…"
	}
	return line
}

func (t *Team) messageTeammate(ctx context.Context, req *mcp.CallToolRequest, in MessageTeammateIn) (*mcp.CallToolResult, any, error) {
	meta, err := parseCallMeta(req.Params.Meta)
	if err != nil {
		return teamRefused("%v", err)
	}
	if err := checkText(in.Text); err != nil {
		return teamRefused("%v", err)
	}
	if err := checkHops(meta.Hops); err != nil {
		return teamRefused("%v", err)
	}
	if err := contract.CheckAgentName(in.Agent); err != nil {
		return teamRefused("%v", err)
	}
	if in.Agent == t.cfg.Agent {
		return teamRefused("a teammate is another agent of your owner's: %s is you", in.Agent)
	}
	if t.cfg.Teammates == nil {
		return teamRefused("agent %s: %v (this agent has no teammates here)", in.Agent, ErrNoTeammate)
	}
	if _, err := t.cfg.Teammates.Teammate(ctx, in.Agent); errors.Is(err, ErrNoTeammate) {
		return teamRefused("%v", err)
	} else if err != nil {
		t.cfg.Logger.Warn("team: a teammate can't be reached", "agent", in.Agent, "err", err.Error())
		return teamRefused("agent %s can't be reached now: its endpoint or key doesn't read (the scheduler's log says why)", in.Agent)
	}
	thread, err := teammateThread(t.cfg.Agent)
	if err != nil {
		return teamRefused("%v", err)
	}
	j := &job{ID: newJobID(), Kind: kindAgent, Parent: meta.Thread, Hops: meta.Hops, Thread: thread, Teammate: in.Agent, Text: in.Text, Since: t.cfg.Now().UTC(), Stage: stageAsking}
	var over overLimit
	if err := t.add(j, 0); errors.As(err, &over) {
		return teamRefused("%v", err)
	} else if err != nil {
		return teamRefused("the message couldn't be kept: %v", err)
	}
	return told("Sent to %s (in its conversation with you, %s). Its reply comes back here as a message from agent:%s.", in.Agent, thread, in.Agent)
}

// teammateThread is the conversation a teammate reads this agent's
// messages in: link:agent-<this agent>.
func teammateThread(agent string) (string, error) {
	thread := "link:agent-" + agent
	if err := contract.CheckThread(thread); err != nil {
		return "", fmt.Errorf("a teammate reads your messages in link:agent-<your name>, and %s: %w", thread, err)
	}
	return thread, nil
}

func (t *Team) listTeammates(ctx context.Context, _ *mcp.CallToolRequest, _ NoIn) (*mcp.CallToolResult, any, error) {
	if t.cfg.Teammates == nil {
		return told("You have no teammates here.")
	}
	names, err := t.cfg.Teammates.Names(ctx)
	if err != nil {
		return teamRefused("the owner's agents can't be listed: %v", err)
	}
	names = removeName(names, t.cfg.Agent)
	if len(names) == 0 {
		return told("You have no teammates here.")
	}
	sort.Strings(names)
	return told("Your teammates: %s.", strings.Join(names, ", "))
}

// removeName is names without name.
func removeName(names []string, name string) []string {
	out := names[:0:0]
	for _, n := range names {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}

// sortJobs sorts jobs oldest first.
func sortJobs(all []job) {
	sort.Slice(all, func(a, b int) bool { return all[a].Since.Before(all[b].Since) })
}
