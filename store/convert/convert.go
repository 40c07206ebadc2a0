// Package convert moves an agent's conversations from one way of keeping
// them to another (lnk agent chat convert), by hand and with the agent
// stopped, each conversation whole at every step.
package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/folder"
	"github.com/lnk-dev/link/store/router"
	"github.com/lnk-dev/link/store/transcript"
)

// Holder holds every conversation's lease while a convert runs.
const Holder = "convert"

// The prefixes of a convert's folders beside a conversation's: the new
// way, written before it's put in place, and the old, put aside.
const (
	convertPrefix = ".convert-"
	oldPrefix     = ".old-"
)

// The steps of converting one conversation, in order, as Job.Step
// is told them: each is about to be taken.
const (
	StepStage  = "stage"  // write the new way in .convert-<folder>/<folder>
	StepAside  = "aside"  // rename <folder> to .old-<folder>
	StepIn     = "in"     // rename .convert-<folder>/<folder> to <folder>
	StepForget = "forget" // let a driver forget the old way's rows
	StepClean  = "clean"  // remove .old-<folder> and .convert-<folder>
)

// Job moves each conversation of an agent that isn't kept the way
// To says to that way (lnk agent chat convert), by hand and with the agent
// stopped. Each is written the new way in a folder beside its own
// (chats/.convert-<folder>/<folder>), with what else its folder holds (its
// tools, a turn asked to end, answers still to hand over) and, but for
// compact, its copy for people made again; its events are read back and
// compared, byte for byte; then it is put in place: its folder renamed
// aside (.old-<folder>), the new renamed into its place, the old way's
// rows forgotten by a driver that keeps them outside the folder, and the
// old folder removed.
//
// A convert stopped anywhere leaves each conversation whole in one of
// these states, which the next convert (or Resolve) finishes first:
//
//	<folder> and .convert-<folder>   the new way half written: removed, and
//	                                 a driver's rows of it forgotten
//	.old-<folder> and .convert-<folder>/<folder>, no <folder>
//	                                 the new way whole, not in place: put in
//	.old-<folder> and <folder>       in place: the old way's rows forgotten,
//	                                 its folder removed
//	.old-<folder> alone              put back
type Job struct {
	Paths store.Paths
	To    string
	// Drivers open each way by name: log, compact, and each store driver.
	Drivers map[string]driver.Opener
	// Progress, when set, is told how many conversations are done of how
	// many, at the start and after each.
	Progress func(done, total int)
	// Step, when set, is told each step before it is taken, and stops the
	// convert there when it returns an error.
	Step func(thread, step string) error
	// LeaseTTL is how long each lease is taken for, renewed as each
	// conversation begins; 10 minutes when zero.
	LeaseTTL time.Duration

	open map[string]store.Conversations // drivers opened on the conversations folder
}

// Result says what a convert did.
type Result struct {
	Converted []string // the threads written the new way
	// Unforgotten are the threads whose old rows a driver without Forget
	// still keeps.
	Unforgotten []string
	// Links are the threads whose conversation folder is a symbolic link
	// (router.ListThreads): refused, left as they are and not converted,
	// nothing read or written through the link.
	Links []string
}

// Agent converts every conversation of the agent at p to the way to
// says; see Job.
func Agent(ctx context.Context, p store.Paths, to string, drivers map[string]driver.Opener, progress func(done, total int)) (Result, error) {
	c := &Job{Paths: p, To: to, Drivers: drivers, Progress: progress}
	return c.Run(ctx)
}

// Run converts. It refuses, having changed nothing, while any
// conversation's lease is held. A conversation whose folder is a
// symbolic link is refused, never followed, and named in Result.Links.
func (c *Job) Run(ctx context.Context) (res Result, err error) {
	if err := driver.CheckName(c.To); err != nil {
		return res, fmt.Errorf("convert to %s: %w", c.To, err)
	}
	if c.Drivers[c.To] == nil {
		return res, fmt.Errorf("convert to %s: %w", c.To, driver.ErrNoDriver)
	}
	chats := c.Paths.Chats()
	if err := os.MkdirAll(chats, 0o700); err != nil {
		return res, fmt.Errorf("convert to %s: %w", c.To, err)
	}
	unlock, err := fsx.LockDir(ctx, chats)
	if err != nil {
		return res, fmt.Errorf("convert to %s: %w", c.To, err)
	}
	defer unlock()
	defer c.close()
	if res.Unforgotten, err = c.resolve(ctx); err != nil {
		return res, fmt.Errorf("convert to %s: finish the last convert: %w", c.To, err)
	}

	type job struct{ thread, from string }
	var jobs []job
	threads, links, err := router.ListThreads(ctx, c.Paths)
	if err != nil {
		return res, fmt.Errorf("convert to %s: %w", c.To, err)
	}
	res.Links = links
	for _, th := range threads {
		dir, _ := c.Paths.Conversation(th)
		kind, err := driver.Of(dir)
		if err != nil {
			return res, fmt.Errorf("convert to %s: %w", c.To, err)
		}
		if kind != "" && kind != c.To {
			jobs = append(jobs, job{th, kind})
		}
	}

	// Every lease first, so a convert refused has changed nothing.
	held := map[string]string{}
	defer func() {
		for th, kind := range held {
			if d, oerr := c.driver(kind); oerr == nil {
				d.Release(context.WithoutCancel(ctx), th, Holder)
			}
		}
	}()
	for _, j := range jobs {
		d, err := c.driver(j.from)
		if err != nil {
			return res, fmt.Errorf("convert %s to %s: %w", j.thread, c.To, err)
		}
		if _, err := d.Lease(ctx, j.thread, Holder, c.ttl()); err != nil {
			return res, fmt.Errorf("convert to %s: %s is in use, stop the agent first: %w", c.To, j.thread, err)
		}
		held[j.thread] = j.from
	}

	c.progress(0, len(jobs))
	for i, j := range jobs {
		forgot, err := c.convert(ctx, j.thread, j.from)
		if err != nil {
			return res, fmt.Errorf("convert %s from %s to %s: %w", j.thread, j.from, c.To, err)
		}
		delete(held, j.thread) // its lease went with its old way
		res.Converted = append(res.Converted, j.thread)
		if !forgot {
			res.Unforgotten = append(res.Unforgotten, j.thread)
		}
		c.progress(i+1, len(jobs))
	}
	return res, nil
}

// convert moves one conversation, held by its lease, from the way from to
// c.To. forgot is false when from's driver kept rows it can't forget.
func (c *Job) convert(ctx context.Context, thread, from string) (forgot bool, err error) {
	src, err := c.driver(from)
	if err != nil {
		return false, err
	}
	if _, err := src.Lease(ctx, thread, Holder, c.ttl()); err != nil {
		return false, err
	}
	live, _ := c.Paths.Conversation(thread)
	chats, name := filepath.Dir(live), filepath.Base(live)
	stageRoot := filepath.Join(chats, convertPrefix+name)
	old := filepath.Join(chats, oldPrefix+name)

	if err := c.step(thread, StepStage); err != nil {
		return false, err
	}
	if err := c.stage(ctx, src, thread, stageRoot); err != nil {
		return false, err
	}
	if err := c.step(thread, StepAside); err != nil {
		return false, err
	}
	if err := c.putInPlace(ctx, src, thread, live, old, filepath.Join(stageRoot, name)); err != nil {
		return false, err
	}
	if err := c.step(thread, StepForget); err != nil {
		return false, err
	}
	forgot = true
	if !inFolder(from) {
		src.Release(ctx, thread, Holder)
		if forgot, err = c.forget(ctx, from, thread); err != nil {
			return false, err
		}
	}
	if err := c.step(thread, StepClean); err != nil {
		return false, err
	}
	if err := os.RemoveAll(old); err != nil {
		return false, err
	}
	return forgot, os.RemoveAll(stageRoot)
}

// stage writes thread's events the new way in stageRoot/<folder>, and
// its transcript but for compact.
func (c *Job) stage(ctx context.Context, src store.Conversations, thread, stageRoot string) error {
	events, err := src.Read(ctx, thread, 1)
	if err != nil {
		return err
	}
	live, _ := c.Paths.Conversation(thread)
	stage := filepath.Join(stageRoot, filepath.Base(live))
	if err := os.RemoveAll(stageRoot); err != nil {
		return err
	}
	if err := os.Mkdir(stageRoot, 0o700); err != nil {
		return err
	}
	if err := c.write(ctx, thread, stageRoot, stage, events); err != nil {
		return err
	}
	if d, _ := driver.Lookup(c.To); !d.NoTranscript {
		if err := folder.Write(filepath.Join(stage, transcript.File), transcript.Render(events)); err != nil {
			return err
		}
	}
	return nil
}

// putInPlace carries what else the conversation's folder holds into the
// staged one and puts that in its place, the old renamed aside, all under
// the folder's own lock: the lock every writer of those files takes
// (folder.Lock), so an answer kept meanwhile is either in what is carried
// or written, once the lock is let go, into the new folder.
func (c *Job) putInPlace(ctx context.Context, src store.Conversations, thread, live, old, stage string) error {
	unlock, err := fsx.LockDir(ctx, live)
	if err != nil {
		return err
	}
	defer unlock()
	if err := carryFiles(live, stage); err != nil {
		return err
	}
	if err := c.carryTools(ctx, src, thread, stage); err != nil {
		return err
	}
	if err := fsx.SyncDir(stage); err != nil {
		return err
	}
	if err := fsx.SyncDir(filepath.Dir(stage)); err != nil {
		return err
	}
	if err := os.Rename(live, old); err != nil {
		return err
	}
	if err := c.step(thread, StepIn); err != nil {
		return err
	}
	if err := os.Rename(stage, live); err != nil {
		return err
	}
	return fsx.SyncDir(filepath.Dir(live))
}

// carryFiles copies into stage the files of live's folder that aren't
// events (folder.Carried), and every answers.json set aside there.
func carryFiles(live, stage string) error {
	names := slices.Clone(folder.Carried)
	entries, err := os.ReadDir(live)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), folder.AnswersAside) && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	for _, f := range names {
		if err := carry(filepath.Join(live, f), filepath.Join(stage, f)); err != nil {
			return err
		}
	}
	return nil
}

// write writes events as thread's in stage, the new way: through a
// driver opened on stageRoot for a way kept in the folder, else through
// c.To's driver, its folder holding only its marker. It reads them back
// and compares them, byte for byte.
func (c *Job) write(ctx context.Context, thread, stageRoot, stage string, events []store.Event) error {
	all := events
	var dst store.Conversations
	if inFolder(c.To) {
		d, err := c.Drivers[c.To](stageRoot)
		if err != nil {
			return err
		}
		if cl, ok := d.(store.Closer); ok {
			defer cl.Close()
		}
		dst = d
		if err := os.Mkdir(stage, 0o700); err != nil {
			return err
		}
	} else {
		d, err := c.driver(c.To)
		if err != nil {
			return err
		}
		dst = d
		// The marker first: a driver's rows of a thread whose folder
		// doesn't say so are known half written, and forgotten.
		if err := driver.Mark(stage, c.To); err != nil {
			return err
		}
		// Rows the driver already keeps of the thread (an earlier
		// convert's, stopped, or the old way's of a conversation converted
		// away and back) that are the events' first, byte for byte, are
		// theirs: the rest is appended after them. Others are forgotten.
		rows, err := d.Read(ctx, thread, 1)
		if err != nil {
			return err
		}
		if k := samePrefix(events, rows); k == len(rows) {
			events = events[k:]
		} else {
			f, ok := d.(store.Forgetter)
			var err error
			if ok {
				err = f.Forget(ctx, thread)
			}
			if !ok || errors.Is(err, errors.ErrUnsupported) {
				return fmt.Errorf("%s keeps %d other events of %s and can't forget them", c.To, len(rows), thread)
			}
			if err != nil {
				return err
			}
		}
	}
	for _, e := range events {
		if err := dst.Append(ctx, thread, e); err != nil {
			return err
		}
	}
	back, err := dst.Read(ctx, thread, 1)
	if err != nil {
		return err
	}
	return sameEvents(all, back)
}

// samePrefix is how many of rows are events' first, byte for byte; 0
// when rows aren't a prefix of events at all.
func samePrefix(events, rows []store.Event) int {
	if len(rows) > len(events) || sameEvents(events[:len(rows)], rows) != nil {
		return -1
	}
	return len(rows)
}

// sameEvents compares two runs of events by their lines, byte for byte,
// their times in UTC: the log keeps every time in UTC, another way may
// keep the zone it was given.
func sameEvents(want, got []store.Event) error {
	if len(got) != len(want) {
		return fmt.Errorf("read back %d events of %d written", len(got), len(want))
	}
	for i := range want {
		a, err := store.MarshalLine(store.InUTC(want[i]))
		if err != nil {
			return err
		}
		b, err := store.MarshalLine(store.InUTC(got[i]))
		if err != nil {
			return err
		}
		if !bytes.Equal(a, b) {
			return fmt.Errorf("event %d read back differs", want[i].Seq)
		}
	}
	return nil
}

// inFolder says whether kind keeps its events in the conversation's
// folder.
func inFolder(kind string) bool {
	d, _ := driver.Lookup(kind)
	return d.InFolder()
}

// driver opens kind's driver on the conversations folder, once.
func (c *Job) driver(kind string) (store.Conversations, error) {
	if d := c.open[kind]; d != nil {
		return d, nil
	}
	o := c.Drivers[kind]
	if o == nil {
		return nil, fmt.Errorf("%s: %w", kind, driver.ErrNoDriver)
	}
	d, err := o(c.Paths.Chats())
	if err != nil {
		return nil, err
	}
	if c.open == nil {
		c.open = map[string]store.Conversations{}
	}
	c.open[kind] = d
	return d, nil
}

func (c *Job) close() {
	for _, d := range c.open {
		if cl, ok := d.(store.Closer); ok {
			cl.Close()
		}
	}
	c.open = nil
}

// forget lets kind's driver forget thread; false when it can't.
func (c *Job) forget(ctx context.Context, kind, thread string) (bool, error) {
	d, err := c.driver(kind)
	if err != nil {
		return false, err
	}
	f, ok := d.(store.Forgetter)
	if !ok {
		return false, nil
	}
	if err := f.Forget(ctx, thread); err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			return false, nil
		}
		return true, err
	}
	return true, nil
}

func (c *Job) step(thread, step string) error {
	if c.Step == nil {
		return nil
	}
	return c.Step(thread, step)
}

func (c *Job) progress(done, total int) {
	if c.Progress != nil {
		c.Progress(done, total)
	}
}

func (c *Job) ttl() time.Duration {
	if c.LeaseTTL > 0 {
		return c.LeaseTTL
	}
	return 10 * time.Minute
}

// carry copies one of the folder's files, when there is one, whole and
// synced, as it is: one that doesn't read (an answers.json set aside) is
// carried too, for a person to look at.
func carry(from, to string) (err error) {
	in, err := fsx.Open(from, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := fsx.Open(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	return out.Sync()
}

// exists says whether path names anything.
func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// carryTools keeps a converted conversation's tools where its new way
// keeps them, never wider: the old driver's, when it kept them in its
// store, narrow the staged folder's tools.json (which the old folder's
// copy gave it), and the new driver, when it keeps tools, is narrowed by
// the same. A driver answering store.ErrToolsUnsupported keeps none.
func (c *Job) carryTools(ctx context.Context, src store.Conversations, thread, stage string) error {
	path := filepath.Join(stage, folder.Tools)
	var tools *[]string
	b, err := folder.Read(path)
	if err != nil {
		return err
	}
	if b != nil {
		if tools, err = store.ParseTools(b); err != nil {
			return fmt.Errorf("tools of %s: %w", thread, err)
		}
	}
	if tk, ok := src.(store.ToolsKeeper); ok {
		kept, err := tk.ReadTools(ctx, thread)
		if err != nil && !errors.Is(err, store.ErrToolsUnsupported) {
			return err
		}
		if kept != nil {
			tools = contract.Narrow(tools, kept)
			if err := folder.WriteTools(path, *tools); err != nil {
				return err
			}
		}
	}
	if tools == nil || inFolder(c.To) {
		return nil
	}
	dst, err := c.driver(c.To)
	if err != nil {
		return err
	}
	if tk, ok := dst.(store.ToolsKeeper); ok {
		if _, err := tk.NarrowTools(ctx, thread, tools); err != nil && !errors.Is(err, store.ErrToolsUnsupported) {
			return err
		}
	}
	return nil
}
