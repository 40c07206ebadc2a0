// Package drivers is the registry of the ways Link keeps an agent's
// conversations, and how each is run: the log and compact, the spec's
// own, in the program's process; every other driver behind the store
// bridge, in its plugin lnk-<name> (lnk-sqlite, lnk-gcs), a child process
// started at the driver's first call (spec: "A driver is a plugin").
// Both ends are here: Set opens an agent's drivers for the harness and
// lnk, and Serve is a plugin's program.
package drivers

import (
	"crypto/rand"
	"log/slog"
	"slices"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
	_ "github.com/lnk-dev/link/store/compact" // registers itself, to run in process
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/transcript"
)

// Driver is one way of keeping conversations.
type Driver struct {
	// Name is the way's name, as config.json's storage.conversations and a
	// conversation's marker (store.<name>) say it.
	Name string
	// Open opens the driver in this process on an agent's conversations
	// folder; nil runs it in its plugin, lnk-<Name>, behind the store
	// bridge.
	Open driver.Opener
	// Settings are what its plugin is told: each by a flag of lnk's
	// commands and the plugin's, and by the environment.
	Settings []Setting
	// Environ are the variables of the environment its plugin reads
	// besides its settings (its SDK's: credentials, a project), passed to
	// it with them (PluginEnv); a name ending in * stands for every
	// variable it begins.
	Environ []string
}

// Setting is one thing a driver's plugin is told, by a flag or by the
// environment variable it reads.
type Setting struct {
	Flag  string // the flag, without its dashes: gcs-bucket
	Env   string // the environment variable: LNK_GCS_BUCKET
	Usage string
}

// The settings of Cloud Storage's driver, lnk-gcs.
var (
	GCSBucket   = Setting{Flag: "gcs-bucket", Env: "LNK_GCS_BUCKET", Usage: "the Google Cloud Storage bucket of conversations kept by gcs"}
	GCSEndpoint = Setting{Flag: "gcs-endpoint", Env: "LNK_GCS_ENDPOINT", Usage: "a Cloud Storage endpoint other than Google's, such as a fake-gcs-server's http://127.0.0.1:4443/storage/v1/ (sent no credentials)"}
	GCSPrefix   = Setting{Flag: "gcs-prefix", Env: "LNK_GCS_PREFIX", Usage: "the agent's prefix in the bucket (default agents/<agent>/chats)"}
)

// gcsEnviron are the variables Google's Cloud Storage client reads: its
// credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's folder), project,
// metadata server and emulator.
var gcsEnviron = []string{"GOOGLE_*", "CLOUDSDK_CONFIG", "GCE_METADATA_HOST", "GCE_METADATA_IP", "STORAGE_EMULATOR_HOST"}

// Link are Link's own drivers: those that register themselves to run in
// the program's process (store/driver: the log and compact), and SQLite's
// and Cloud Storage's in their plugins, which Link's programs can't link.
var Link = append(inProcess(),
	Driver{Name: "sqlite"},
	Driver{Name: "gcs", Settings: []Setting{GCSBucket, GCSEndpoint, GCSPrefix}, Environ: gcsEnviron},
)

// inProcess are the drivers registered to open in the program's process.
func inProcess() []Driver {
	var out []Driver
	for _, d := range driver.All() {
		if d.Open != nil {
			out = append(out, Driver{Name: d.Name, Open: d.Open})
		}
	}
	return out
}

// Names are the names of Link's drivers, sorted.
func Names() []string {
	var out []string
	for _, d := range Link {
		out = append(out, d.Name)
	}
	slices.Sort(out)
	return out
}

// Lookup finds one of Link's drivers by name.
func Lookup(name string) (Driver, bool) {
	for _, d := range Link {
		if d.Name == name {
			return d, true
		}
	}
	return Driver{}, false
}

// Set opens an agent's drivers for a program: Link's, those in process
// directly, each other through a store bridge: one already running
// (Bridges), the agent's beside it (Beside), else a child running its
// plugin.
type Set struct {
	// Key proves each call to a plugin: the agent's key for the harness;
	// nil is a random key of the set's own (for lnk's commands, which
	// reach the store directly).
	Key []byte
	// Env is the program's environment, where a child's plugin is found
	// ($LNK_STORE_COMMAND) and what of it the child is passed: its
	// driver's settings ($LNK_GCS_BUCKET...) and variables alone
	// (PluginEnv). nil is this process's.
	Env map[string]string
	// Logger gets what a plugin says and when it ends; nil logs nothing.
	Logger *slog.Logger
	// Bridges are drivers reached through a store bridge already running,
	// by name (a blank unit's, given at its binding): dialed at the first
	// call, in place of a child.
	Bridges map[string]bridge.Config
	// Beside reaches every other driver of a plugin through the agent's
	// store bridge running beside it, at its BridgeSocket, proved with
	// Key: the spec's way, Link Harness's unless told to start children
	// (serve --store-child). Nothing is started; a call when no bridge
	// answers there fails, saying how to run one.
	Beside bool
	// Ahead has the log keep a folder made ahead for the next
	// conversation it begins, with its copy for people (log.MakeAhead):
	// for a program that answers messages, not a command that writes one
	// conversation and ends.
	Ahead bool
}

// Open opens every driver on the agent at p. None does anything before its
// first call: a plugin starts then, so an agent that never keeps a
// conversation in one runs none.
func (s Set) Open(p store.Paths) (map[string]store.Conversations, error) {
	s = s.keyed()
	out := map[string]store.Conversations{}
	for _, d := range Link {
		if d.Open != nil {
			c, err := d.Open(p.Chats())
			if err != nil {
				return nil, err
			}
			if l, ok := c.(*log.Driver); ok && s.Ahead {
				l.MakeAhead(transcript.File)
			}
			out[d.Name] = c
			continue
		}
		out[d.Name] = s.reach(p, d.Name)
	}
	for name, cfg := range s.Bridges {
		if out[name] == nil {
			out[name] = &bridged{cfg: cfg}
		}
	}
	return out, nil
}

// Openers opens each driver on any folder, for a convert: one in process
// on the folder it is given, a plugin on the agent's own conversations
// (it keeps them outside the folder).
func (s Set) Openers(p store.Paths) map[string]driver.Opener {
	s = s.keyed()
	out := map[string]driver.Opener{}
	for _, d := range Link {
		if d.Open != nil {
			out[d.Name] = d.Open
			continue
		}
		name := d.Name
		out[name] = func(string) (store.Conversations, error) { return s.reach(p, name), nil }
	}
	return out
}

// reach is a driver of a plugin as the set reaches it: through the store
// bridge it was given, the agent's beside it, or a child.
func (s Set) reach(p store.Paths, driver string) store.Conversations {
	if cfg, ok := s.Bridges[driver]; ok {
		return &bridged{cfg: cfg}
	}
	if s.Beside {
		return s.beside(p, driver)
	}
	return s.plugin(p, driver)
}

// keyed gives the set a key of its own when it has none.
func (s Set) keyed() Set {
	if s.Key == nil {
		s.Key = []byte(rand.Text())
	}
	return s
}
