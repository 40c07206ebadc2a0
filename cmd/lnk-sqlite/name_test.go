package main

import (
	"testing"

	"github.com/lnk-dev/link/cmd/internal/drivers/driverstest"
)

// The plugin serves the driver its package registers, by the name Link's
// programs run it under.
func TestNameRegistered(t *testing.T) { driverstest.Registered(t, plugin.Name) }
