package delivery

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/lnk-dev/link/internal/jsonx"
)

// appendAnswer appends k's JSON to b without its closing brace: the
// bytes json.Marshal makes of k, with no reflection (a turn's hold
// encodes its answer once).
func appendAnswer(b []byte, k Answer) ([]byte, error) {
	if !jsonTime(k.At) || !k.EventTime.IsZero() && !jsonTime(k.EventTime) {
		m, err := json.Marshal(k) // its error: a time JSON can't hold
		if err != nil {
			return nil, err
		}
		return append(b, m[:len(m)-1]...), nil
	}
	b = append(b, `{"id":`...)
	b = jsonx.AppendString(b, k.ID)
	b = append(b, `,"thread":`...)
	b = jsonx.AppendString(b, k.Thread)
	b = append(b, `,"text":`...)
	b = jsonx.AppendString(b, k.Text)
	b = append(b, `,"at":"`...)
	b = append(k.At.AppendFormat(b, time.RFC3339Nano), '"')
	if k.Seq != 0 {
		b = strconv.AppendInt(append(b, `,"seq":`...), k.Seq, 10)
	}
	if !k.EventTime.IsZero() {
		b = append(b, `,"eventTime":"`...)
		b = append(k.EventTime.AppendFormat(b, time.RFC3339Nano), '"')
	}
	if k.ForChat {
		b = append(b, `,"forChat":true`...)
	}
	return b, nil
}

// jsonTime says t is a time time.Time's MarshalJSON writes as
// RFC3339Nano: a year of four digits, an offset in whole minutes.
func jsonTime(t time.Time) bool {
	if y := t.Year(); y < 0 || y > 9999 {
		return false
	}
	_, off := t.Zone()
	return off%60 == 0 && off > -24*3600 && off < 24*3600
}
