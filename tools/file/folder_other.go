//go:build !linux

package file

// openKernelRoot: only Linux has openat2; elsewhere the workspace is an
// os.Root.
func openKernelRoot(string) (folder, error) { return nil, errNoKernel }
