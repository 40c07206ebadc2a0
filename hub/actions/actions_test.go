package actions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/hub"
)

func TestChat(t *testing.T) {
	got := Chat()
	if len(got) != 2 {
		t.Fatalf("the chat namespace has %d actions", len(got))
	}
	c := got[0]
	if c.Namespace != "chat" || c.Name != "create" || strings.Join(c.Aliases, ",") != "new" || c.Names[0] != "clear" || !c.NewSession || got[1].NewSession {
		t.Errorf("chat's first action is %+v, want /chat:create alias /new named clear first, beginning a new session (compact not)", c)
	}
}

func TestParse(t *testing.T) {
	good := "namespace = \"task\"\n[[actions]]\nname = \"list\"\ndescription = \"List\"\nroute = \"task__list\"\n"
	got, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if want := (hub.Action{Namespace: "task", Name: "list", Description: "List", Route: "task__list"}); got[0].Route != want.Route || got[0].Name != want.Name {
		t.Errorf("got %+v, want %+v", got[0], want)
	}
	for _, c := range []struct{ file, rule string }{
		{"namespace = \"Bad\"", "a namespace is"},
		{"namespace = \"x\"\n[[actions]]\nname = \"a b\"", "an action's name is"},
		{"namespace = \"x\"\n[[actions]]\nname = \"a\"\n[[actions]]\nname = \"a\"", "named once"},
		{"namespace = \"x\"\n[[actions]]\nname = \"a\"\naliases = [\"x:y\"]", "an alias is"},
		{"namespace = \"x\"\n[[actions]]\nname = \"a\"\nnames = [\"/clear\"]", "no slash"},
		{"namespace = \"x\"\n[[actions]]\nname = \"a\"\nroute = \"a b\"", "a route is"},
		{"namespace = \"x\"\n[[actions]]\nname = \"a\"\nroute = \"t__a\"\nnames = [\"a\"]", "has no harness names"},
		{"namespace = \"x\"\n[[actions]]\nname = \"a\"\nroute = \"t__a\"\nnew_session = true", "no new_session"},
		{"namespace = \"x\"\nother = 1", "alone"},
		{"namespace = ", "is TOML"},
		{"namespace = \"x\"\n#" + strings.Repeat("x", MaxFile), "at most"},
	} {
		_, err := Parse([]byte(c.file))
		var r *contract.RuleError
		if !errors.As(err, &r) || !strings.Contains(r.Rule, c.rule) {
			t.Errorf("%.40q: %v, want a refusal saying %q", c.file, err, c.rule)
		}
	}
}

func TestLoad(t *testing.T) {
	p := filepath.Join(t.TempDir(), "actions.toml")
	os.WriteFile(p, chatFile, 0o600)
	a, err := Load(p)
	if err != nil || len(a) != 2 {
		t.Fatalf("%v, %d actions", err, len(a))
	}
	os.WriteFile(p, []byte(strings.Repeat("#", MaxFile+10)), 0o600)
	var r *contract.RuleError
	if _, err := Load(p); !errors.As(err, &r) || !strings.Contains(r.Rule, "at most") {
		t.Errorf("an oversized file was refused with %v, want the rule it breaks", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(chatFile)
	f.Add([]byte("namespace = \"task\"\n[[actions]]\nname = \"list\"\nroute = \"task__list\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Parse(b)
		if err != nil {
			return
		}
		for _, a := range got {
			if !isWord(a.Namespace) || !isWord(a.Name) {
				t.Fatalf("accepted %+v", a)
			}
		}
	})
}
