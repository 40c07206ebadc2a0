package store

import "path/filepath"

// KeyFile is the agent's endpoint key file, endpoint.key, which lnk agent
// chat makes once when it starts the agent itself.
func (p Paths) KeyFile() string { return filepath.Join(p.Root, "endpoint.key") }
