package delivery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// SendingDir is the folder, in the agent's conversations folder, of the
// answers sending to a caller who waits: a file each, named by the
// answer's id. No thread's folder has its name (contract.FolderThread
// refuses a name without "-").
const SendingDir = "sending"

// Grace is how long after its turn returned an answer sending from this
// process is passed over by Recover: the prompt's response is written in
// that time, or failed to be, and the answer is then settled like any
// other whose turn is gone.
const Grace = 10 * time.Second

// Hold writes k to chats/sending/<id>.json while it is sent to a caller
// who waits: a small file of its own, made with O_EXCL (or written into a
// spare) and synced nowhere: it survives the process's kill, as the page cache
// keeps it, not a machine's stop, which loses at worst this one. k.ID is
// from NewID; k.Seq and k.EventTime name the event its answer is about to
// be stored as; k.ForChat, when the answer is kept for lnk agent chat
// too, so a recover that adopts it leaves it for the chat as well. With
// again, the file already made under k.ID is written over, whole or not
// at all: the append retried under another number, or the hold marked
// for chat.
func (a *Answers) Hold(ctx context.Context, k Answer, again bool) error {
	h, err := a.hold(ctx, k, again, nil)
	h.close()
	return err
}

// hold is Hold, written into the spare into when there is one (taken
// for k by spareFor), and returns the file it wrote as its let-go makes
// a spare of it: its length, when it was written, and where a file is
// kept open (keepOpen) the file itself, unless it was written over again
// (Replace makes another).
func (a *Answers) hold(ctx context.Context, k Answer, again bool, into *spare) (spare, error) {
	if k.At.IsZero() {
		k.At = a.now()
	}
	k.At = k.At.UTC()
	if !k.EventTime.IsZero() {
		k.EventTime = k.EventTime.UTC()
	}
	name, err := contract.ThreadFolder(k.Thread)
	if err == nil && (!strings.HasPrefix(k.ID, name+idSep) || len(k.ID) == len(name+idSep) || strings.ContainsAny(k.ID, `/\`)) {
		err = fmt.Errorf("hold an answer of %s: id %q is not of its folder", k.Thread, k.ID)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		if into != nil && !a.spares.put(*into) { // not written: kept for another
			into.close()
			os.Remove(a.sendingPath(into.id))
		}
		return spare{}, err
	}
	path := a.sendingPath(k.ID)
	if into != nil && !again {
		if h, err := a.holdInto(*into, k); err == nil {
			return h, nil
		}
	}
	if err := a.sendingNoLink(); err != nil {
		return spare{}, fmt.Errorf("hold an answer of %s: %w", k.Thread, err)
	}
	b, err := encodeHold(k, 0)
	if err != nil {
		return spare{}, err
	}
	if again {
		if err = fsx.Replace(path, b, false); err != nil {
			return spare{}, fmt.Errorf("hold an answer of %s again: %w", k.Thread, err)
		}
		return spare{size: len(b), written: time.Now()}, nil
	}
	fh, err := openFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
			fh, err = openFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	if err != nil {
		return spare{}, fmt.Errorf("hold an answer of %s: %w", k.Thread, err)
	}
	_, err = fh.Write(b)
	if err == nil && keepOpen {
		return spare{size: len(b), written: time.Now(), f: fh}, nil
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return spare{}, fmt.Errorf("hold an answer of %s: %w", k.Thread, err)
	}
	return spare{size: len(b), written: time.Now()}, nil
}

// sendingNoLink refuses the folder of the answers sending when it is a
// symbolic link: held answers are never written or read where it points,
// which may be another agent's.
func (a *Answers) sendingNoLink() error {
	dir := filepath.Join(a.Paths.Chats(), SendingDir)
	if fi, err := lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return &fs.PathError{Op: "open", Path: dir, Err: fsx.ErrSymlink}
	}
	return nil
}

// sendingPath is the path of the sending file of id, which holds no
// separator.
func (a *Answers) sendingPath(id string) string {
	a.init()
	return a.sendingDir + string(filepath.Separator) + id + ".json"
}

// Sending lists the answers sending, in no order: those whose turn is
// gone among them, for Settle.
func (a *Answers) Sending(ctx context.Context) ([]Answer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	all, err := a.holds(nil)
	if err != nil {
		return nil, fmt.Errorf("read answers sending: %w", err)
	}
	return all, nil
}

// holds reads the sending files but those of an id skip names (nil:
// none), asked before the file is read: a turn lets its hold go (the
// file) before this process stops passing it over, so an id skip lets
// through was let go already, or its turn is gone (a file gone since the
// folder was listed reads as none). One that doesn't read as an answer
// of its own id is passed over (parseHold): a spare, holding the answer
// it held before under that answer's id; one a machine's stop left empty
// or with a spare's bytes, which never held its answer on the disk; a
// live turn's read mid-write. Not written for staleSpare, it is removed.
// This process's own spares aren't read.
func (a *Answers) holds(skip func(id string) bool) ([]Answer, error) {
	return a.holdsIn(SendingDir, nil, skip)
}

// holdsIn appends to out the answers held in the folder name of the
// conversations folder, but those of an id out has already or skip names.
func (a *Answers) holdsIn(name string, out []Answer, skip func(id string) bool) ([]Answer, error) {
	dir := filepath.Join(a.Paths.Chats(), name)
	d, err := fsx.Open(dir, os.O_RDONLY, 0) // never through a link
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	had := len(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), spareName) {
			a.removeStale(dir, e)
			continue
		}
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() || skip != nil && skip(id) || a.spares.has(id) || slices.ContainsFunc(out[:had], func(k Answer) bool { return k.ID == id }) {
			continue
		}
		b, err := fsx.ReadLimit(filepath.Join(dir, e.Name()), maxFile)
		if errors.Is(err, fsx.ErrTooBig) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if k, ok := parseHold(b, id); ok {
			out = append(out, k)
		} else {
			a.removeStale(dir, e) // a spare, or a hold a machine's stop cut
		}
	}
	if a.read != nil {
		a.read()
	}
	return out, nil
}

// adopt moves each sending answer that skip doesn't name (its turn gone:
// killed before the caller had it, or it failed) into its conversation's
// answers.json, synced, then removes its file, so it is handed over as
// any pending answer is, for chat when it was held for chat. One already
// there is only removed: under its own id (a kill between the two), or
// under another with its event's number (kept for the chat's message, or
// for a caller gone, by End before a kill or a late let-go), so it is
// kept once. One that fails is named in the log and tried again at the
// next recover.
func (a *Answers) adopt(ctx context.Context, skip func(id string) bool) error {
	all, err := a.holds(skip)
	if err != nil {
		return fmt.Errorf("read answers sending: %w", err)
	}
	for _, k := range all {
		err := a.update(ctx, k.Thread, func(pending []Answer) ([]Answer, bool) {
			if slices.ContainsFunc(pending, func(o Answer) bool { return o.ID == k.ID || k.Seq > 0 && o.Seq == k.Seq }) {
				return pending, false
			}
			return append(pending, k), true
		})
		if err == nil {
			err = a.release(k.ID)
		}
		if err != nil {
			a.logger().LogAttrs(ctx, slog.LevelWarn, "adopt an answer its turn left", slog.String("thread", k.Thread), slog.String("err", err.Error()))
		}
	}
	return nil
}

// release removes the sending file of id, syncing nothing; an id that
// names none is passed over.
func (a *Answers) release(id string) error {
	if !strings.Contains(id, idSep) || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return nil
	}
	err := os.Remove(a.sendingPath(id))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("let a sent answer go: %w", err)
	}
	return nil
}

// isSending says whether id is of an answer this process is sending: its
// turn runs, or returned less than Grace ago.
func (a *Answers) isSending(id string) bool {
	v, ok := a.sending.Load(id)
	if !ok {
		return false
	}
	returned := v.(time.Time)
	return returned.IsZero() || a.now().Sub(returned) < Grace
}

// Turn is one turn's answer on its way to a caller who waits, from the
// append that stores it to the prompt's response.
type Turn struct {
	a      *Answers
	thread string
	id     string // the sending answer whose event was stored last, "" for none
	held   Answer // what the hold of id holds
	file   spare  // its file, for the spare its let-go makes
}

// Begin returns the Turn that carries one turn's answer in thread to its
// caller: its Hook holds the answer as its event is stored, and its End
// lets the hold go or keeps the answer pending.
func (a *Answers) Begin(thread string) *Turn { return &Turn{a: a, thread: thread} }

// Hook is told of the append of the event of an answer that ends a round
// without calls (the harness's append hook): before each try, with the
// event numbered and timed (done false), and once after the last (done
// true, err what it came to). It holds text as sending just before the
// event is stored, naming its number and time, and writes the hold over
// at a retry under another number, so a recover can tell whether the
// event was stored (Settle). An answer held by an earlier round of the
// turn is let go once the new one's event is stored: until then it is
// the one whose event is. Nothing is synced
// (docs/decisions/028-answer-settled.md).
func (t *Turn) Hook(ctx context.Context, text string) func(e store.Event, done bool, err error) {
	a := t.a
	id := ""
	var k Answer   // the last try's hold
	var file spare // its file
	return func(e store.Event, done bool, err error) {
		switch {
		case done && id == "":
		case done && err != nil:
			// Stored or not, the event decides at a recover: no longer
			// passed over.
			a.sending.Delete(id)
			file.close()
		case done:
			if t.id != "" && t.id != id {
				t.drop(ctx, t.id, t.file)
			}
			t.id, t.held, t.file = id, k, file
		default:
			again := id != ""
			var into *spare
			if !again {
				if id, into, err = a.spareFor(t.thread); err != nil {
					id = ""
					break
				}
				a.sending.Store(id, time.Time{}) // passed over while the turn runs
			}
			k = Answer{ID: id, Thread: t.thread, Text: text, At: a.now(), Seq: e.Seq, EventTime: e.Time}
			h, herr := a.hold(ctx, k, again, into)
			if herr == nil || !again {
				file.close() // written over: its name is another file's
				file = h
			}
			if err = herr; err != nil {
				t.drop(ctx, id, file) // what an earlier try held named another number
				id, file = "", spare{}
			}
		}
		if err != nil && !done {
			a.logger().LogAttrs(ctx, slog.LevelWarn, "hold an answer while it is sent", slog.String("thread", t.thread), slog.String("err", err.Error()))
		}
	}
}

// spareFor is the id of a new answer of thread and the spare its hold is
// written into, if any: one named for thread gives its id (the hold is
// then one write), another conversation's is renamed to a new id.
func (a *Answers) spareFor(thread string) (string, *spare, error) {
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return "", nil, err
	}
	sp, ok := a.spares.take(name)
	switch {
	case !ok:
		id, err := NewID(thread)
		return id, nil, err
	case sp.folder() == name:
		return sp.id, &sp, nil
	}
	id, err := NewID(thread)
	return id, &sp, err
}

// End is called once the turn is over, with text its whole answer and
// seq its event's number. An answer whose caller went is kept pending,
// and one a message of lnk agent chat send joined (forChat) is kept for
// that message; either way its sending file goes once the pending one is
// on the disk (left for a recover when that keep failed: err says so).
// For a caller still there, delivered is what lets the answer go once the
// prompt's response is written: until then, and Grace after End, this
// process's Recover passes it over. delivered is nil when there is
// nothing to let go. An answer kept for chat has its hold marked for chat
// first, so a recover that adopts it (the response's write failed, or a
// kill came first) never hands it to a bridge, even once the chat's
// message has taken its copy.
func (t *Turn) End(ctx context.Context, text string, seq int64, callerGone, forChat bool) (delivered func(), err error) {
	if forChat && !callerGone && t.id != "" && !t.held.ForChat {
		t.held.ForChat = true
		h, herr := t.a.hold(ctx, t.held, true, nil)
		if herr == nil {
			t.file.close() // written over: its name is another file's
			t.file = h
		}
		if herr != nil {
			t.a.logger().LogAttrs(ctx, slog.LevelWarn, "mark an answer held for chat", slog.String("thread", t.thread), slog.String("err", herr.Error()))
		}
	}
	switch {
	case forChat:
		_, err = t.a.KeepForChat(ctx, t.thread, text, time.Time{}, seq)
	case callerGone:
		_, err = t.a.Keep(ctx, t.thread, text, time.Time{}, seq)
	}
	id, file := t.id, t.file
	switch {
	case id == "":
	case !callerGone:
		t.a.sending.Store(id, t.a.now()) // passed over a while yet
		wctx := context.WithoutCancel(ctx)
		return func() { t.drop(wctx, id, file) }, err
	case err == nil:
		t.drop(ctx, id, file) // pending now, as a caller gone's is
	default:
		t.a.sending.Delete(id) // left for a recover to adopt
		file.close()
	}
	return nil, err
}

// Failed is called in place of End when the turn failed: its caller got
// an error, not the answer, so a hold is left in chats/sending for a
// recover to settle.
func (t *Turn) Failed() {
	if t.id != "" {
		t.a.sending.Delete(t.id)
		t.file.close()
	}
}

// drop lets the sending answer id go, its file the spare for the next
// hold: a recover no longer passes it over.
func (t *Turn) drop(ctx context.Context, id string, file spare) {
	if err := t.a.letGo(id, file); err != nil {
		t.a.logger().LogAttrs(ctx, slog.LevelWarn, "let a sent answer go", slog.String("thread", t.thread), slog.String("err", err.Error()))
	}
	t.a.sending.Delete(id)
}
