package drivers

import (
	"slices"
	"strings"

	"github.com/lnk-dev/link/cmd/internal/environ"
)

// baseEnv are the variables every plugin is passed from the environment
// of the program that starts it: what any program needs to run and
// reach the network (its path, home, temporary folder, locale, proxies
// and certificates; Windows's system folder, without which it opens no
// socket). Nothing else of that program's goes: not its providers' keys,
// not another driver's settings.
var baseEnv = []string{
	"PATH", "HOME", "USER", "TMPDIR", "TEMP", "TMP", "LANG", "LC_ALL", "TZ",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	"SYSTEMROOT", "SystemRoot", "USERPROFILE", "APPDATA", "LOCALAPPDATA",
}

// PluginEnv is the environment a driver's plugin is started with, taken
// from env (nil: this process's): the base variables, the driver's
// settings, and the variables of the outside world its plugin reads
// (Driver.Environ); nothing else. A name ending in * stands for every
// variable it begins.
func PluginEnv(d Driver, env map[string]string) []string {
	if env == nil {
		env = environ.Map()
	}
	names := slices.Concat(baseEnv, d.Environ)
	for _, s := range d.Settings {
		names = append(names, s.Env)
	}
	var out []string
	for k, v := range env {
		if passed(names, k) {
			out = append(out, k+"="+v)
		}
	}
	slices.Sort(out)
	return out
}

// passed says whether the variable k is one of names.
func passed(names []string, k string) bool {
	for _, n := range names {
		if prefix, ok := strings.CutSuffix(n, "*"); ok && strings.HasPrefix(k, prefix) || n == k {
			return true
		}
	}
	return false
}
