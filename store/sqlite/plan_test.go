package sqlite

import (
	"strings"
	"testing"
)

// Every query the driver makes of events finds its rows through the
// (thread, seq) index, with no sort, so what it costs doesn't grow with
// the file.
func TestQueryPlans(t *testing.T) {
	d := open(t, t.TempDir())
	appendN(t, d, "default", 1, 3, "x")
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{queryLast, []any{"default"}},
		{queryFrom, []any{"default", 2}},
		{queryLatest, []any{"default", 32}},
		{queryLease, []any{"default"}},
		{queryLetGo, []any{"default", "h"}},
	} {
		rows, err := d.r.Query(`EXPLAIN QUERY PLAN `+q.sql, q.args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		p := strings.Join(plan, "; ")
		if !strings.HasPrefix(p, "SEARCH ") || !strings.Contains(p, "INDEX sqlite_autoindex_") || strings.Contains(p, "TEMP B-TREE") {
			t.Fatalf("%s: plan %q, want a search of the index and no sort", q.sql, p)
		}
	}
}
