// Package driver is the registry of the ways Link keeps a conversation,
// and the detection of which one keeps a conversation's folder. Each
// driver registers itself when its package is loaded, as database/sql
// drivers and litestream's backends do: its name, written once in its
// own package (store/log, store/compact, store/sqlite, store/gcs; a
// plugin's also in cmd/internal/drivers, the table of the programs that
// run it and can't link it), and, for one that keeps a conversation's
// events in files of the conversation's own folder, those files, so that
// the folder says which driver keeps it (Of), and how it opens in the
// program's process. A driver that keeps them elsewhere leaves an
// empty marker in the folder, store.<name> (Mark).
package driver

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/lnk-dev/link/store"
)

// Driver is what a driver registers of itself.
type Driver struct {
	// Name is the driver's name, as config.json's storage.conversations
	// and a conversation's marker (store.<name>) say it, and its plugin
	// (lnk-<name>) is named: lowercase letters and digits (CheckName).
	Name string
	// Open opens the driver on an agent's conversations folder in the
	// program's own process, for a driver run there (the spec's own: the
	// log and compact); nil for one run in its plugin, lnk-<name>.
	Open Opener
	// Events are the files of a conversation's folder that hold its
	// events, for a driver that keeps them there; none for one that
	// keeps them elsewhere. Every event the driver appends changes the
	// size or modification time of one of them, so a conversation whose
	// files are as they were has no new event (the harness's sweep and
	// memory pass over it).
	Events []string
	// Sign is the one of Events whose presence says the driver keeps the
	// conversation: once it holds an event, or as soon as it is there
	// when EmptySign is set.
	Sign      string
	EmptySign bool
	// NoTranscript says the driver's conversations keep no copy for
	// people (store/transcript's chat.md): compact's, kept small.
	NoTranscript bool
	// Default says the driver is the spec's way when it names none
	// ([storage] conversations unset): the log's. One driver says so.
	Default bool
}

// InFolder says the driver keeps a conversation's events in files of its
// folder (Events): the log and compact.
func (d Driver) InFolder() bool { return len(d.Events) > 0 }

// Opener opens a driver on the conversations of the agent whose
// conversations folder is chats. A driver whose events are in the
// conversation's folder (the log, compact) is opened on a convert's own
// folder too, to write a conversation there before it is put in place.
type Opener func(chats string) (store.Conversations, error)

// ErrNoDriver: a conversation is kept by a driver the caller wasn't given.
var ErrNoDriver = errors.New("no such driver")

// maxDrivers bounds how many drivers register: Of notes the signs it
// found in one word.
const maxDrivers = 64

var (
	registryMu sync.Mutex
	registry   atomic.Pointer[[]Driver]
)

// Register declares a driver, for Lookup and Of. It panics on a
// declaration that isn't whole (a name CheckName refuses, a sign not among
// its events, or one without a sign) or a name already registered, as a
// program's setup error.
func Register(d Driver) {
	if CheckName(d.Name) != nil || d.InFolder() != slices.Contains(d.Events, d.Sign) || !d.InFolder() && (d.Sign != "" || d.EmptySign) {
		panic(fmt.Sprintf("store/driver: %q: a name, and for a driver in the folder its events' files and a sign among them", d.Name))
	}
	d.Events = slices.Clone(d.Events)
	registryMu.Lock()
	defer registryMu.Unlock()
	var all []Driver
	if p := registry.Load(); p != nil {
		all = slices.Clone(*p)
	}
	if len(all) == maxDrivers {
		panic("store/driver: more than 64 drivers")
	}
	for _, o := range all {
		if o.Name == d.Name {
			panic("store/driver: " + d.Name + " registered twice")
		}
		if o.Default && d.Default {
			panic("store/driver: " + d.Name + " and " + o.Name + " both the default")
		}
	}
	all = append(all, d)
	registry.Store(&all)
}

// Lookup gives what the driver name registered; false for one the
// program links none of (a driver run in its plugin).
func Lookup(name string) (Driver, bool) {
	for _, d := range registered() {
		if d.Name == name {
			return d, true
		}
	}
	return Driver{}, false
}

// All are the registered drivers, in the order they registered.
func All() []Driver { return slices.Clone(registered()) }

// Default is the name of the driver registered as the spec's way when it
// names none (Driver.Default), "" in a program that links none.
func Default() string {
	for _, d := range registered() {
		if d.Default {
			return d.Name
		}
	}
	return ""
}

func registered() []Driver {
	if p := registry.Load(); p != nil {
		return *p
	}
	return nil
}

// CheckName checks a way of keeping conversations as the spec names one:
// a driver's name, lowercase letters and digits, which names its marker
// (store.<driver>) and its plugin (lnk-<driver>).
func CheckName(name string) error {
	if name == "" || len(name) > 32 {
		return fmt.Errorf("conversations are kept %q: a way is log, compact or a driver's name", name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return fmt.Errorf("conversations are kept %q: a driver's name is lowercase letters and digits", name)
		}
	}
	return nil
}
