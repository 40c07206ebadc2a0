//go:build !linux

package file

import "testing"

// eachWay runs fn the one way there is: through an os.Root.
func eachWay(t *testing.T, fn func(t *testing.T)) { fn(t) }
