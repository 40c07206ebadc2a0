package scheduler

import (
	"context"
	"errors"
	"os"
	"sort"
	"strings"
	"time"
)

// A task's later answers: a task that starts tasks of its own (or
// messages a teammate) answers again when their answers come back into
// its conversation. The scheduler tells those into the task's
// conversation and waits for the task's answer there, then carries that
// on up to the task's parent, from task:<id>, as it did the first: so
// every answer of a task reaches the conversation that started it, and
// none is left kept where nobody reads. A task ended is kept as a record
// (stageDone) for this, doneKeep, maxDone of them at most.

// Bounds of the records of tasks ended.
const (
	doneKeep = 7 * 24 * time.Hour
	maxDone  = 1024
)

// over says j is done: removed, or a task's record.
func (j *job) over() bool { return j.Stage == "" || j.Stage == stageDone }

// index records j as the task of its conversation, unless a later one
// is; t.mu is held.
func (t *Team) index(j *job) {
	if old := t.tasks[j.Thread]; old == nil || !j.Since.Before(old.Since) {
		t.tasks[j.Thread] = j
	}
}

// taskOf is the latest task whose conversation thread is, running or
// ended, nil for none. Its ID, Parent and Hops never change, so they are
// read without the lock.
func (t *Team) taskOf(thread string) *job {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tasks[thread]
}

// up takes j's answer one task up: told into rec's conversation, where
// rec's answer to it is waited for (or, told before a crash, taken from
// those kept there), then carried on to rec's parent from task:<rec>.
func (t *Team) up(ctx context.Context, j *job, rec *job) error {
	self, err := t.cfg.Self(ctx)
	if err != nil {
		return err
	}
	if j.Stage == stageUpKept {
		text, ids, err := t.kept(ctx, self, j.to(), j.KeptSince)
		if errors.Is(err, errGaveUp) {
			return t.carry(j, rec, "No answer: "+err.Error()+".")
		}
		if err != nil {
			return err
		}
		if err := t.carry(j, rec, text); err != nil {
			return err
		}
		t.letGo(ctx, self, j, ids)
		return nil
	}
	answer, err := t.cfg.Sender.Ask(ctx, self, Message{ID: j.replyID(), Since: j.Since, Thread: j.to(), Text: j.Answer, From: j.from(), Hops: j.hops()})
	switch {
	case errors.Is(err, ErrReceived):
		t.mu.Lock()
		j.Stage, j.KeptSince = stageUpKept, t.cfg.Now().UTC()
		t.mu.Unlock()
		return t.jobs.save(j)
	case errors.Is(err, ErrRefused):
		t.cfg.Logger.Error("team: an answer couldn't be brought back", "job", j.from(), "parent", j.to(), "err", err.Error())
		return t.finish(j)
	case errors.Is(err, ErrFailed):
		answer = "No answer: " + err.Error() + "."
	case err != nil:
		return err
	}
	return t.carry(j, rec, answer)
}

// carry makes answer, rec's answer in its conversation, j's to bring on
// to rec's parent, from task:<rec>, saved.
func (t *Team) carry(j *job, rec *job, answer string) error {
	t.mu.Lock()
	j.Answer, j.Stage, j.KeptSince = cut(answer), stageAnswered, time.Time{}
	j.To, j.Via, j.Ups = rec.Parent, "task:"+rec.ID, j.Ups+1
	t.mu.Unlock()
	return t.jobs.save(j)
}

// finish ends j once its answer is where it goes: a task kept as the
// record of its conversation (stageDone), anything else forgotten.
func (t *Team) finish(j *job) error {
	if j.Kind == kindTask {
		t.mu.Lock()
		j.Stage, j.Ended = stageDone, t.cfg.Now().UTC()
		t.mu.Unlock()
		if err := t.jobs.save(j); err != nil {
			return err
		}
	} else {
		if err := t.jobs.remove(j.ID); err != nil {
			return err
		}
		t.mu.Lock()
		j.Stage = ""
		t.mu.Unlock()
	}
	t.mu.Lock()
	delete(t.running, j.ID)
	t.mu.Unlock()
	if t.cfg.Done != nil {
		t.cfg.Done(j.Kind + ":" + j.ID)
	}
	t.prune()
	return nil
}

// prune forgets the records of tasks ended more than doneKeep ago, and
// the oldest past maxDone.
func (t *Team) prune() {
	t.mu.Lock()
	var done []*job
	for _, j := range t.tasks {
		if j.Stage == stageDone {
			done = append(done, j)
		}
	}
	sort.Slice(done, func(a, b int) bool { return done[a].Ended.After(done[b].Ended) })
	now := t.cfg.Now()
	var gone []*job
	for i, j := range done {
		if i >= maxDone || now.Sub(j.Ended) > doneKeep {
			gone = append(gone, j)
			delete(t.tasks, j.Thread)
		}
	}
	t.mu.Unlock()
	for _, j := range gone {
		if err := t.jobs.remove(j.ID); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.cfg.Logger.Warn("team: a task's record not forgotten", "task", j.ID, "err", err.Error())
		}
	}
}

// cut is answer as brought back: words said for none, and past
// MaxReplyText cut at a character's start, saying so.
func cut(answer string) string {
	if strings.TrimSpace(answer) == "" {
		return "[It answered with no words.]"
	}
	if len(answer) <= MaxReplyText {
		return answer
	}
	n := MaxReplyText
	for n > 0 && !utf8RuneStart(answer[n]) {
		n--
	}
	return answer[:n] + "\n[The answer was cut here: it was longer than the scheduler brings back.]"
}
