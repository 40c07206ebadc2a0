package main

import (
	"runtime/debug"
	"testing"
)

// The harness collects at 200 unless GOGC says otherwise, which it keeps.
func TestSetGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	if got := setGC(map[string]string{}); got != 200 || debug.SetGCPercent(100) != 200 {
		t.Fatalf("without GOGC: %d", got)
	}
	debug.SetGCPercent(50) // as GOGC=50 would have set it at the start
	if got := setGC(map[string]string{"GOGC": "50"}); got != 50 || debug.SetGCPercent(100) != 50 {
		t.Fatalf("with GOGC=50: %d", got)
	}
}
