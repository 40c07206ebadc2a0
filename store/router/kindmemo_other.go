//go:build !linux

package router

import "time"

// dirStamp is nothing off Linux: no folder's identity is read here, so
// the router remembers no folder's kind.
type dirStamp struct{ known bool }

func stampDir(string) (dirStamp, error) { return dirStamp{}, nil }

func (dirStamp) trusted(time.Time) bool { return false }

func regularNonEmpty(string) bool { return false }
