// Package background runs an agent's commands in the background, beyond
// the turn and the tool's session that started them and beyond the run
// server itself: what run__start, run__list, run__read and run__stop do.
//
// Each command runs under a supervisor of its own, a small process made
// by executing this program again (Supervise), which is the command's
// parent: it starts the command in a process group of its own, writes its
// output to files on disk, records how it ended (end.json) and exits. The
// run server may die and start again meanwhile: everything of a command
// is in its folder, <home>/run/<id>/ (0700, its files 0600), never in the
// server's memory. The supervisor holds the folder's lock for as long as
// it lives, so a server that starts finds each command again by its lock:
// held, it still runs; let go, it ended, and end.json says how, or, with
// none, its supervisor was lost (killed) and the command said lost.
//
// A command's end is told once (Teller) to the conversation that started
// it, as a message from run:<id>; the told file records it, so an end is
// told again only when the teller never took it.
package background
