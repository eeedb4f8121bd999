package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
)

type pageRow struct {
	id  string
	key int64
}

// TestKeysetPagesWalkTheWholeList walks a list with ties in its sort key
// forward page by page and back again, in every order, and checks that
// the pages together are the list, in order, each row once.
func TestKeysetPagesWalkTheWholeList(t *testing.T) {
	ctx := context.Background()
	db, _ := openAny(t)
	err := db.Transact(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(`CREATE TABLE page_rows (id TEXT PRIMARY KEY, k INTEGER NOT NULL)`); err != nil {
			return err
		}
		for i := range 23 {
			// Keys repeat (ties) and are not in id order.
			if _, err := tx.Exec(`INSERT INTO page_rows (id, k) VALUES (?, ?)`, fmt.Sprintf("r%02d", i), (i*7)%5); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	query := func(p Page, o Order) []pageRow {
		cond, args := p.Where(o)
		where := ""
		if cond != "" {
			where = " WHERE " + cond
		}
		rows, err := db.Read().QueryContext(ctx, `SELECT id, k FROM page_rows`+where+` ORDER BY `+p.OrderBy(o)+` LIMIT ?`, append(args, p.Fetch())...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []pageRow
		for rows.Next() {
			var r pageRow
			rows.Scan(&r.id, &r.key)
			out = append(out, r)
		}
		return out
	}
	cursor := func(r pageRow) Cursor { return Cursor{Key: strconv.FormatInt(r.key, 10), ID: r.id} }
	for _, o := range []Order{
		{Key: "k", ID: "id", Numeric: true},
		{Key: "k", KeyDesc: true, ID: "id", Numeric: true},
		{Key: "k", ID: "id", IDDesc: true, Numeric: true},
		{Key: "k", KeyDesc: true, ID: "id", IDDesc: true, Numeric: true},
	} {
		all := query(Page{Size: 100}, o)
		for size := 1; size <= 8; size++ {
			name := fmt.Sprintf("%s size %d", (Page{}).OrderBy(o), size)
			var forward [][]pageRow
			p := Page{Size: size}
			for range 30 {
				shown, next, prev := paginate(p, query(p, o), cursor)
				if (prev != nil) != !p.First() {
					t.Errorf("%s: page %d has prev=%v", name, len(forward)+1, prev)
				}
				forward = append(forward, shown)
				if next == nil {
					break
				}
				p = Page{After: next, Size: size}
			}
			if got := slices.Concat(forward...); !slices.Equal(got, all) {
				t.Fatalf("%s: forward pages = %v, want %v", name, got, all)
			}
			// And back from the last page to the first, by prev links.
			last := forward[len(forward)-1]
			back := [][]pageRow{last}
			p = Page{Before: ptr(cursor(last[0])), Size: size}
			for len(back) < len(forward) {
				shown, next, prev := paginate(p, query(p, o), cursor)
				if next == nil {
					t.Fatalf("%s: a previous page has no next link", name)
				}
				back = append([][]pageRow{shown}, back...)
				if prev == nil {
					break
				}
				p = Page{Before: prev, Size: size}
			}
			if got := slices.Concat(back...); !slices.Equal(got, all) {
				t.Fatalf("%s: backward pages = %v, want %v", name, got, all)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestParsePage(t *testing.T) {
	c := Cursor{Key: "2026-01-01T00:00:00Z", ID: "act_1"}
	for _, tt := range []struct {
		after, before string
		wantErr       bool
		first         bool
	}{
		{"", "", false, true},
		{c.String(), "", false, false},
		{"", c.String(), false, false},
		{c.String(), c.String(), true, false},
		{"!!", "", true, false},
		{"bm8tbnVs", "", true, false}, // "no-nul": no separator
		{string(make([]byte, 600)), "", true, false},
	} {
		p, err := ParsePage(tt.after, tt.before, 25)
		if (err != nil) != tt.wantErr || (err == nil && p.First() != tt.first) {
			t.Errorf("ParsePage(%q, %q) = %+v, %v; want error %v, first %v", tt.after, tt.before, p, err, tt.wantErr, tt.first)
		}
	}
	if back, err := ParseCursor(c.String()); err != nil || back != c {
		t.Errorf("ParseCursor(String()) = %+v, %v; want %+v", back, err, c)
	}
}

func TestPrefixRange(t *testing.T) {
	tests := []struct{ prefix, lo, hi string }{
		{"", "", ""},
		{"ali", "ali", "alj"},
		{"ord-100", "ord-100", "ord-101"},
		{"é", "é", "ê"},
		{"a\uD7FF", "a\uD7FF", "a\uE000"}, // past the surrogates
		{"a\U0010FFFF", "a\U0010FFFF", ""},
	}
	for _, tt := range tests {
		lo, hi := PrefixRange(tt.prefix)
		if lo != tt.lo || hi != tt.hi {
			t.Errorf("PrefixRange(%q) = %q, %q; want %q, %q", tt.prefix, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestSeekBoundsTheKeyBeforeTheCursor(t *testing.T) {
	o := Order{Key: "a.created_at", KeyDesc: true, ID: "a.id", IDDesc: true}
	c := &Cursor{Key: "t5", ID: "x5"}
	tests := []struct {
		name string
		page Page
		cond string
		args []any
	}{
		{"first page", Page{Size: 10}, "", nil},
		{"older", Page{After: c, Size: 10}, "a.created_at <= ? AND (a.created_at < ? OR (a.created_at = ? AND a.id < ?))", []any{"t5", "t5", "t5", "x5"}},
		{"newer", Page{Before: c, Size: 10}, "a.created_at >= ? AND (a.created_at > ? OR (a.created_at = ? AND a.id > ?))", []any{"t5", "t5", "t5", "x5"}},
	}
	for _, tt := range tests {
		cond, args := tt.page.Seek(o)
		if cond != tt.cond || !slices.Equal(args, tt.args) {
			t.Errorf("%s: Seek = %q %v, want %q %v", tt.name, cond, args, tt.cond, tt.args)
		}
	}
}
