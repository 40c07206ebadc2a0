//go:build !unix

package file

import "errors"

func mkfifo(string) error { return errors.New("no named pipes") }
