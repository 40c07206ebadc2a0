package acp

import "testing"

// A session/list's cwd is an absolute path of whichever system the
// editor runs: Unix's, a Windows drive's either way, a share's; a
// relative one, or a drive's relative form, is not.
func TestAbsolutePaths(t *testing.T) {
	for p, want := range map[string]bool{
		"/home/ada": true, `C:\Users\ada`: true, "c:/x": true, `\\server\share`: true,
		"work": false, `C:x`: false, "": false, "1:/x": false, `.\x`: false,
	} {
		if got := absolute(p); got != want {
			t.Errorf("absolute(%q) = %v, want %v", p, got, want)
		}
	}
}
