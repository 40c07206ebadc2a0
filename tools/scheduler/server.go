package scheduler

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/tools/mcpserve"
)

// Tool is the scheduler as tools/mcpserve names it.
var Tool = mcpserve.Tool{Name: "scheduler", Title: "Link Scheduler", Env: "LNK_SCHEDULER"}

// Instructions is what the scheduler's initialize answer says of its
// calls: how schedules work together.
const Instructions = `Your clock: messages sent to you later, at a time you set.

- scheduler__schedule sets one: text is the message you will get then (write it as what to do: "Remind the owner to call the bank"), and exactly one of at (a time: 2026-12-07 09:00), after (a delay: 20m, 2h), every (an interval, at least 1m) or cron ("0 9 * * 1-5", @daily), in the scheduler's zone unless you say zone. It goes into this conversation unless you name thread.
- At its time the message comes to you from schedule:<id>, quoted; answer it as the owner would want, in that conversation, and your answer reaches them there.
- An occurrence missed while the machine was off comes once when it is back, saying it is late; if_missed "skip" drops it instead.
- scheduler__list_schedules lists them with their ids and next times; scheduler__cancel_schedule stops one. A schedule done once is gone by itself.`

// New is the scheduler's MCP server over sc and its team t: schedule,
// list_schedules and cancel_schedule, and the team's calls
// (AddTeamTools); its initialize instructions are Instructions and
// TeamInstructions. Handler serves it.
func New(sc *Scheduler, t *Team) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "link-scheduler", Title: "Link Scheduler", Version: "1"}, &mcp.ServerOptions{Instructions: Instructions + "\n\n" + TeamInstructions})
	AddTeamTools(s, t)
	c := calls{sc: sc}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "schedule",
		Description: "Set a message to be sent to you later: text, and exactly one of at (a time), after (a delay), every (an interval) or cron; optionally zone, thread (default this conversation) and if_missed (late or skip). Answers the schedule's id and its next time.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: ptr(false)},
	}, c.schedule)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "list_schedules",
		Description: "List your schedules, soonest first: each one's id, when it sends, its next time, its conversation and its text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, c.list)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "cancel_schedule",
		Description: "Cancel a schedule by its id (as schedule or list_schedules answered it): none of its messages is sent from now.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
	}, c.cancel)
	return s
}

func ptr[T any](v T) *T { return &v }

// Handler serves s over Streamable HTTP, a session for each client that
// initializes, ended once unused for an hour.
func Handler(s *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour})
}

type calls struct{ sc *Scheduler }

// CancelIn is the cancel call's arguments.
type CancelIn struct {
	ID string `json:"id" jsonschema:"the schedule's id"`
}

// ListIn is the schedules call's arguments: none.
type ListIn struct{}

func (c calls) schedule(ctx context.Context, req *mcp.CallToolRequest, in Request) (*mcp.CallToolResult, any, error) {
	thread, hops, err := mcpserve.Origin(req.Params.Meta)
	if err != nil {
		return refused(err), nil, nil
	}
	s, err := c.sc.Add(ctx, in, thread, hops)
	if err != nil {
		return refused(err), nil, nil
	}
	loc := s.location()
	text := fmt.Sprintf("Scheduled %s: %s, next at %s, into %s.", s.ID, s.what(), s.Next.In(loc).Format(sayLayout), s.Thread)
	return answer(text), nil, nil
}

// maxListed bounds the schedules one answer lists.
const maxListed = 200

// maxListedText bounds each schedule's text as listed, in bytes.
const maxListedText = 200

func (c calls) list(ctx context.Context, _ *mcp.CallToolRequest, _ ListIn) (*mcp.CallToolResult, any, error) {
	all := c.sc.List()
	if len(all) == 0 {
		return answer("No schedules."), nil, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d schedules, soonest first:\n", len(all))
	for i, s := range all {
		if i == maxListed {
			fmt.Fprintf(&b, "... and %d more, later.\n", len(all)-maxListed)
			break
		}
		fmt.Fprintf(&b, "- %s: %s, next %s, into %s: %q\n", s.ID, s.what(), s.Next.In(s.location()).Format(sayLayout), s.Thread, truncate(s.Text, maxListedText))
	}
	return answer(b.String()), nil, nil
}

func (c calls) cancel(ctx context.Context, _ *mcp.CallToolRequest, in CancelIn) (*mcp.CallToolResult, any, error) {
	s, err := c.sc.Cancel(strings.TrimSpace(in.ID))
	if err != nil {
		return refused(err), nil, nil
	}
	return answer(fmt.Sprintf("Cancelled %s (%s, into %s).", s.ID, s.what(), s.Thread)), nil, nil
}

func answer(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// refused is a call's answer that nothing was done, and why.
func refused(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Refused: " + err.Error()}}}
}
