// Package scheduler is Link's scheduler, an MCP server of its own that
// Link Harness reaches at $LNK_SCHEDULER: what an agent does later or
// elsewhere, each sent to an agent's endpoint as Link's bridge sends a
// message (tools/send), exactly once across crashes, its answer reaching
// the conversation it is for.
//
// Its schedules (Scheduler, New) send a message into a conversation at a
// time, after a delay, every interval or on a cron expression, in the
// scheduler's zone, from schedule:<id>: schedule, list_schedules and
// cancel_schedule. Each is a file of its own under <home>/scheduler/
// schedules (0700, each file 0600, written whole), and each occurrence's
// message is recorded in <home>/scheduler/outbox before it is sent, with
// an id of the occurrence, so a crash of the scheduler or the harness
// anywhere sends it once. The scheduler holds one timer, for the soonest
// occurrence; an occurrence missed while it was down is sent once at its
// start, saying it is late, or skipped where its schedule says so.
//
// Its team (Team, AddTeamTools) is the agent's subagents and teammates:
// start_task runs a task in a conversation of its own (link:task-<id>,
// from task:<id>, with its parent's tools or fewer, on its parent's model
// unless it names one), message_teammate sends to another of the owner's
// agents on this machine (read in its link:agent-<sender>, from
// agent:<sender>); each answer comes back into the conversation that
// asked as a message from task:<id> or agent:<name>, which the agent
// then answers for its owner. Every job is a file of its own under
// <home>/scheduler/jobs, read again at start.
package scheduler
