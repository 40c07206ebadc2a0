package gcs

import (
	"fmt"
	"strconv"
	"strings"
)

// The parts of an event object's name after its thread's folder.
const (
	eventsDir = "events/"
	eventExt  = ".json"
	seqDigits = 20 // enough for every int64, so the names sort as numbers
)

// leaseName is the name of the lease object under a thread's folder.
const leaseName = "lease.json"

// eventName is the name of event seq under folder.
func eventName(folder string, seq int64) string {
	return fmt.Sprintf("%s%s%0*d%s", folder, eventsDir, seqDigits, seq, eventExt)
}

// parseSeq reads the number of an event object from its name under
// folder. A name not of the form eventName gives, or of a number below 1,
// is refused.
func parseSeq(folder, name string) (int64, error) {
	rest, ok := strings.CutPrefix(name, folder+eventsDir)
	if !ok {
		return 0, fmt.Errorf("not under %s%s", folder, eventsDir)
	}
	digits, ok := strings.CutSuffix(rest, eventExt)
	if !ok || len(digits) != seqDigits {
		return 0, fmt.Errorf("not %d digits and %s", seqDigits, eventExt)
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, fmt.Errorf("not %d digits and %s", seqDigits, eventExt)
		}
	}
	seq, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("number out of range")
	}
	if seq < 1 {
		return 0, fmt.Errorf("number %d is not positive", seq)
	}
	return seq, nil
}
