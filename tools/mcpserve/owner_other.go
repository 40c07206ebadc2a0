//go:build !unix

package mcpserve

import "io/fs"

// ownedByMe is true where a file's owner isn't a number Go reports (on
// Windows the user's profile folder's access lists keep other users out).
func ownedByMe(fs.FileInfo) bool { return true }
