package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// build is what this program knows of how it was built, from the build
// information Go writes into it (runtime/debug.ReadBuildInfo).
type build struct {
	Module   string `json:"module"`
	Version  string `json:"version"`  // v1.2.3, a pseudo-version, or (devel)
	Commit   string `json:"commit"`   // the VCS revision, or "unknown"
	Time     string `json:"time"`     // the commit's time, when known
	Modified bool   `json:"modified"` // the work tree had changes not committed
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// buildVersion reads this program's build information. A build without
// VCS stamping (go run, which never stamps; go build -buildvcs=false, as
// CI builds; or outside a checkout) has no commit: it is "unknown".
func buildVersion() build {
	b := build{Module: "github.com/lnk-dev/link", Version: "(devel)", Commit: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Path != "" {
		b.Module = info.Main.Path
	}
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// versionLine is the version in one line: lnk (devel), commit abc123.
func versionLine() string {
	b := buildVersion()
	return fmt.Sprintf("lnk %s, commit %s", b.Version, b.describeCommit())
}

// describeCommit is the commit, its time and whether it was modified, or
// why it isn't known.
func (b build) describeCommit() string {
	if b.Commit == "unknown" {
		return "unknown (this build carries no VCS stamp: go run, or built with -buildvcs=false or outside a checkout)"
	}
	s := b.Commit
	if b.Time != "" {
		s += " of " + b.Time
	}
	if b.Modified {
		s += ", with changes not committed"
	}
	return s
}

func (m *Main) versionCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "lnk's module version and the commit it was built from",
		Long: `Prints lnk's module version (v1.2.3, a pseudo-version, or (devel) for a
build from a checkout), the VCS commit it was built from, and the Go that
built it, from the build information Go writes into the program. A build
without VCS stamping (go run; -buildvcs=false, as CI builds) says its
commit is unknown.`,
		Example: `  lnk version
  lnk version --json`,
		GroupID: groupMore,
		Args:    noWords,
		RunE: func(c *cobra.Command, _ []string) error {
			b := buildVersion()
			if asJSON {
				enc := json.NewEncoder(m.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(b)
			}
			fmt.Fprintf(m.Stdout, "lnk %s\n  module  %s\n  commit  %s\n  go      %s %s\n", b.Version, b.Module, b.describeCommit(), b.Go, b.Platform)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print it as JSON")
	return c
}
