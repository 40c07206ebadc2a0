package scheduler

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/harness/prompt"
)

// The scheduler's calls over MCP, as Link Harness makes them: schedule
// in the call's conversation (link.local/thread) with its hops, answered
// with the id and the next time in the zone; list_schedules lists it;
// cancel_schedule stops it; a call whose _meta names no conversation is
// refused naming the rule, nothing kept; the initialize instructions,
// the schedules' and the team's, fit a tool's 2 KB of the prompt
// (TestScheduleCalls).
func TestScheduleCalls(t *testing.T) {
	clock := newFakeClock(t0)
	sc := openAt(t, pathsIn(t, t.TempDir()), clock, nil, nil, Settings{Zone: "Europe/Paris", MaxSchedules: 10})
	srv := New(sc, newTestTeam(t, unsent{t}, 2))
	h := httptest.NewServer(Handler(srv))
	t.Cleanup(h.Close)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if n := len(cs.InitializeResult().Instructions); n > prompt.MaxToolText || !strings.Contains(cs.InitializeResult().Instructions, "scheduler__schedule") || !strings.Contains(cs.InitializeResult().Instructions, "start_task") {
		t.Fatalf("instructions of %d bytes (at most %d), saying both parts: %q", n, prompt.MaxToolText, cs.InitializeResult().Instructions)
	}
	meta := mcp.Meta{"link.local/thread": "telegram:42", "link.local/hops": 2}
	text, failed := call(t, cs, "schedule", Request{Text: "call the bank", Cron: "0 9 * * 1-5"}, meta)
	if failed || !strings.HasPrefix(text, "Scheduled ") || !strings.Contains(text, "next at Tue 8 Dec 2026 09:00 CET, into telegram:42") {
		t.Fatalf("schedule: %q", text)
	}
	all := sc.List()
	if len(all) != 1 || all[0].Hops != 3 || all[0].Thread != "telegram:42" || all[0].Zone != "Europe/Paris" {
		t.Fatalf("kept %+v", all)
	}
	id := all[0].ID
	if text, _ := call(t, cs, "list_schedules", ListIn{}, meta); !strings.Contains(text, "- "+id+": at cron \"0 9 * * 1-5\" (Europe/Paris), next Tue 8 Dec 2026 09:00 CET, into telegram:42: \"call the bank\"") {
		t.Fatalf("list_schedules: %q", text)
	}
	if text, failed := call(t, cs, "schedule", Request{Text: "x", After: "1h"}, mcp.Meta{}); !failed || !strings.Contains(text, "link.local/thread") {
		t.Fatalf("a call naming no conversation: %q", text)
	}
	if text, failed := call(t, cs, "schedule", Request{Text: "x", At: "2026-12-07 08:00"}, meta); !failed || !strings.HasPrefix(text, "Refused: at Mon 7 Dec 2026 08:00 CET is in the past") {
		t.Fatalf("a time in the past: %q", text)
	}
	if text, failed := call(t, cs, "cancel_schedule", CancelIn{ID: id}, meta); failed || !strings.HasPrefix(text, "Cancelled "+id) {
		t.Fatalf("cancel_schedule: %q", text)
	}
	if text, _ := call(t, cs, "list_schedules", ListIn{}, meta); text != "No schedules." {
		t.Fatalf("list_schedules after cancel: %q", text)
	}
	clock.Advance(7 * 24 * time.Hour)
}
