package home

import "testing"

// TestPortableWay runs the link checks the way a system without
// openat2(2) goes: through os.Root, each element looked at.
func TestPortableWay(t *testing.T) {
	noOpenat2.Store(true)
	defer noOpenat2.Store(false)
	linksRefused(t)
	TestReadFileBounded(t)
	TestReadDirBounded(t)
}

// TestPortableWayNamedPipe: the portable way refuses a named pipe too.
func TestPortableWayNamedPipe(t *testing.T) {
	noOpenat2.Store(true)
	defer noOpenat2.Store(false)
	namedPipeRefused(t)
}
