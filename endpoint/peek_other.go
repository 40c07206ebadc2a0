//go:build !unix

package endpoint

import "net"

// hasBytes says whether bytes wait to be read on c; here, where no peek
// is made, never: a silent connection is told from one asking only once
// the server reads its request.
func hasBytes(net.Conn) bool { return false }
