package contract

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckThreadAccepts(t *testing.T) {
	for _, id := range []string{
		"default",
		"telegram:123456789", "telegram:-1001234567890", "telegram:-1001234.42",
		"slack:D0123ABCDEF", "slack:C0123ABC.1700000000.000100",
		"discord:123456789012345678",
		"signal:15551234567",
		"link:notes", "link:a", "link:my-list.v2_b",
	} {
		if err := CheckThread(id); err != nil {
			t.Errorf("CheckThread(%q) = %v, want nil", id, err)
		}
	}
}

func TestCheckThreadRefuses(t *testing.T) {
	for _, tc := range []struct{ id, rule string }{
		{"", "not empty"},
		{"telegram", "<connection>:<chat id>"},
		{"telegram:", "telegram thread"},
		{"telegram:abc", "telegram thread"},
		{"telegram:1.", "telegram thread"},
		{"telegram:1.-2", "telegram thread"},
		{"telegram:../../etc", "telegram thread"},
		{"slack:d0123", "slack thread"},
		{"slack:C01.17000", "slack thread"},
		{"slack:C01/x", "slack thread"},
		{"discord:12a", "discord thread"},
		{"signal:+1555", "signal thread"},
		{"link:", "link thread"},
		{"link:..", "link thread"},
		{"link:.hidden", "link thread"},
		{"link:-x", "link thread"},
		{"link:UPPER", "link thread"},
		{"link:a/b", "link thread"},
		{"link:a\\b", "link thread"},
		{"link:a\x00b", "link thread"},
		{"link:a\nb", "link thread"},
		{"link:" + strings.Repeat("a", 65), "link thread"},
		{"telegram:" + strings.Repeat("1", 200), "at most 128"},
		{"irc:42", "unknown connection"},
		{"Telegram:42", "unknown connection"},
		{"default:1", "unknown connection"},
	} {
		err := CheckThread(tc.id)
		var re *RuleError
		if !errors.As(err, &re) {
			t.Errorf("CheckThread(%q) = %v, want a RuleError", tc.id, err)
			continue
		}
		if re.Field != "thread" || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("CheckThread(%q) = %q, want the rule %q", tc.id, err, tc.rule)
		}
	}
}

func TestThreadFolder(t *testing.T) {
	for id, want := range map[string]string{
		"telegram:42":                      "telegram-42",
		"telegram:-100123.7":               "telegram--100123.7",
		"slack:C0123ABC.1700000000.000100": "slack-C0123ABC.1700000000.000100",
		"link:my-notes":                    "link-my-notes",
		"default":                          "default",
	} {
		got, err := ThreadFolder(id)
		if err != nil || got != want {
			t.Errorf("ThreadFolder(%q) = %q, %v; want %q", id, got, err, want)
		}
		back, err := FolderThread(got)
		if err != nil || back != id {
			t.Errorf("FolderThread(%q) = %q, %v; want %q", got, back, err, id)
		}
	}
	if _, err := ThreadFolder("link:../x"); err == nil {
		t.Error("ThreadFolder accepted a path out of its folder")
	}
	for _, name := range []string{"", "..", "x", "telegram", "irc-42", "link-..", "link-A"} {
		if _, err := FolderThread(name); err == nil {
			t.Errorf("FolderThread(%q) names a thread", name)
		}
	}
}

// FuzzThread proves that any thread id accepted names one safe folder of
// its own, read back to the same id, and that nothing panics.
func FuzzThread(f *testing.F) {
	for _, s := range []string{"default", "telegram:42", "telegram:-1.2", "slack:C1.2.3", "link:a-b", "link:..", "x:/", "signal:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		folder, err := ThreadFolder(id)
		if err != nil {
			var re *RuleError
			if !errors.As(err, &re) || re.Rule == "" {
				t.Fatalf("refusal of %q names no rule: %v", id, err)
			}
			return
		}
		if folder == "" || folder == "." || folder == ".." || strings.ContainsAny(folder, "/\\\x00") || len(folder) > 255 {
			t.Fatalf("thread %q has an unsafe folder %q", id, folder)
		}
		for _, r := range folder {
			if r < 0x21 || r > 0x7e {
				t.Fatalf("thread %q folder %q holds %q", id, folder, r)
			}
		}
		back, err := FolderThread(folder)
		if err != nil || back != id {
			t.Fatalf("folder %q of %q reads back as %q, %v", folder, id, back, err)
		}
	})
}

func TestCheckAgentName(t *testing.T) {
	for _, ok := range []string{"main", "a", "work-bot", "x_1"} {
		if err := CheckAgentName(ok); err != nil {
			t.Errorf("CheckAgentName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "A", "a/b", "..", "a b", strings.Repeat("a", 65)} {
		if err := CheckAgentName(bad); err == nil {
			t.Errorf("CheckAgentName(%q) accepted", bad)
		}
	}
}
