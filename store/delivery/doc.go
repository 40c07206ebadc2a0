// Package delivery is an answer's way to whoever asked for it: the caller
// waiting on its prompt, or, when that caller went, the bridge that asks
// _link/recover. It is one state machine per answer, kept in files of the
// agent's conversations folder so a killed process loses none:
//
//	(none) --Turn.Hook, before its event is stored--> sending   chats/sending/<id>.json
//	sending --Turn.End then delivered(), the response written--> gone
//	sending --Turn.End, the caller gone--> pending (the sending file let go)
//	sending --Turn.End, lnk agent chat send joined--> sending for chat (its file marked)
//	(none) --Keep, a turn nobody waits for--> pending           <thread>/answers.json
//	(none) --KeepForChat, lnk agent chat send joined--> pending for chat
//	sending, its turn gone --Settle: its event stored--> pending (adopted; for chat if marked)
//	sending, its turn gone, its event's answer pending already--> gone (kept once)
//	sending, its turn gone --Settle: another event, or none and no lease--> gone
//	sending, its turn gone --Settle: a turn holds the lease--> sending (passed over)
//	pending --Recover, single phase, in its page--> gone (handed over once)
//	pending --Recover, two-phase, in its page--> pending (handed over with its id) --done--> gone
//	pending for chat --Recover, single phase--> pending for chat (left)
//	pending for chat --Recover, two-phase, in its page--> shown by lnk agent chat --done--> gone
//
// An answer is sending from just before the event that stores it is
// written until its caller has the prompt's response: a kill at any point
// leaves either the file or the caller with it. While its turn runs here,
// and for Grace after it returned, Recover passes it over; after that, a
// recover settles it by the event it names. docs/architecture.md draws
// the same machine; docs/decisions/027-answer-held.md and
// 028-answer-settled.md say why each step is where it is.
//
// A pending answer lives in its conversation's answers.json, synced; a
// sending one in a small file of its own, synced nowhere (a process's
// kill leaves the page cache, and the file with it). One answers.json that
// doesn't read costs its own conversation only: it is set aside, renamed
// answers.json.corrupt-<time> for a person to look at, and named once in
// the log.
package delivery
