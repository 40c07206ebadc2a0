package agentspec_test

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lnk-dev/link/cmd/internal/agentspec"
	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/tools/run"
	"github.com/lnk-dev/link/tools/scheduler"
)

// TestReadersTakeIt: config.json configured from a spec of every table is
// taken by each of its readers, Link Harness's settings, run's and the
// scheduler's (the last two refuse a key they don't know), and each of
// the spec's tables of a tool has the keys its reader's has, no more, no
// fewer: a key added to run or the scheduler is one the spec must learn.
func TestReadersTakeIt(t *testing.T) {
	b := agentspec.ConfigOf(t, agentspec.Full)
	s, err := serve.ParseSettings(b, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "anthropic/claude-opus-5-5" || s.Alias("fast") != "anthropic/claude-haiku-5" || len(s.Fallbacks) != 2 || s.Window.Max != 100000 || !s.Window.Never || s.Window.Unknown != 65536 {
		t.Fatalf("the harness read %+v", s)
	}
	r, err := run.ParseSettings(b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Timeout != 60 || !r.Network || r.Limits.Memory != 4294967296 || r.Background.MaxRunning != 4 || r.Env["GOFLAGS"] != "-mod=mod" {
		t.Fatalf("run read %+v", r)
	}
	sc, err := scheduler.ParseSettings(b)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Zone != "Europe/Paris" || sc.MaxTasks != 4 {
		t.Fatalf("the scheduler read %+v", sc)
	}
	for _, c := range []struct {
		name         string
		spec, reader any
	}{{"run", agentspec.Run{}, run.Settings{}}, {"scheduler", agentspec.Scheduler{}, scheduler.Settings{}}} {
		if d := cmp.Diff(jsonKeys(reflect.TypeOf(c.reader), ""), jsonKeys(reflect.TypeOf(c.spec), "")); d != "" {
			t.Errorf("[%s]'s keys (-reader's +spec's):\n%s", c.name, d)
		}
	}
}

// jsonKeys are the keys a type's json tags name, a struct's within it
// dotted.
func jsonKeys(t reflect.Type, prefix string) []string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, prefix+name)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			out = append(out, jsonKeys(ft, prefix+name+".")...)
		}
	}
	sort.Strings(out)
	return out
}

// TestDocsSpec: the spec docs/agents.md shows an owner is one its readers
// take.
func TestDocsSpec(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## The agent's spec")
	_, rest, ok2 := strings.Cut(rest, "```toml\n")
	spec, _, ok3 := strings.Cut(rest, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/agents.md shows no spec")
	}
	b := agentspec.ConfigOf(t, spec)
	if _, err := serve.ParseSettings(b, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := run.ParseSettings(b); err != nil {
		t.Fatal(err)
	}
	if _, err := scheduler.ParseSettings(b); err != nil {
		t.Fatal(err)
	}
}
