package main

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of a process's times in /proc/<pid>/stat: Linux
// gives them in its USER_HZ, 100 a second on every architecture.
const userHZ = 100

// processCPU is the CPU time pid has used, user and system, all its
// threads'; ok false where the system doesn't say (no /proc).
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	d, err := parseStat(b)
	return d, err == nil
}

// parseStat reads utime and stime, the 14th and 15th fields of
// /proc/<pid>/stat, counted after the command's name, which is in
// parentheses and may hold spaces and parentheses itself.
func parseStat(stat []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, errors.New("read /proc/<pid>/stat: no command name")
	}
	// After the name: state (3), ppid, pgrp, session, tty_nr, tpgid,
	// flags, minflt, cminflt, majflt, cmajflt, utime (14), stime (15).
	f := bytes.Fields(stat[end+1:])
	if len(f) < 13 {
		return 0, errors.New("read /proc/<pid>/stat: too few fields")
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return 0, errors.New("read /proc/<pid>/stat: utime or stime isn't a count")
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / userHZ), nil
}
