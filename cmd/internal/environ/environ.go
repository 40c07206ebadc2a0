// Package environ is the process's environment as Link's programs take
// it: a map, read once at their start and handed down as plain values.
package environ

import (
	"os"
	"strings"
)

// Map is the process's environment as a map; a variable set twice is its
// last value.
func Map() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}
