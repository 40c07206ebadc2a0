// Package harnesstest is the test rig of Link Harness, as store/storetest
// is a store driver's: a Harness on a test's temporary home, its
// conversations in real files (log and compact), its model a scripted
// queue speaking model.Provider, its tools three that answer with their
// input, served on a real endpoint on 127.0.0.1, with helpers to send a
// message and read its answer, and timers a test fires itself.
//
// Tests of any package that runs a Harness build it here rather than
// writing a harness.Config of their own:
//
//	r := harnesstest.New(t)
//	r.Model.Push(model.Response{Text: "hi"})
//	res, x, err := r.Say("telegram:1", "hello", nil)
//	// x.Text() == "hi"
package harnesstest
