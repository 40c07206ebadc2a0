package main

import (
	"testing"

	"github.com/lnk-dev/link/cmd/internal/drivers"
	"github.com/lnk-dev/link/store/driver"
)

// The plugin serves the driver its package registers (store/driver), by
// the name Link's programs run it as a plugin under (drivers.Link): the
// two places a plugin's name is written, the driver's package and the
// table of programs that can't link it, say the same name.
func TestNameRegistered(t *testing.T) {
	if _, ok := driver.Lookup(plugin.Name); !ok {
		t.Errorf("no driver registered %q", plugin.Name)
	}
	d, ok := drivers.Lookup(plugin.Name)
	if !ok || d.Open != nil {
		t.Errorf("drivers.Link has %q as %+v, %v; want a plugin's", plugin.Name, d, ok)
	}
}
