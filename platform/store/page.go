package store

import (
	"encoding/base64"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Keyset paging, for every list Warden shows. A list in a stable order
// (a sort key, then the row's unique id to break ties) pages by
// remembering where a page ended, not by counting rows: every page costs
// the same wherever it is, and rows added meanwhile neither shift a page
// nor show twice.
//
//	order := store.Order{Key: "k.created_at", KeyDesc: true, ID: "k.id", IDDesc: true}
//	cond, args := page.Where(order)          // "" on the first page
//	rows := ... "WHERE ... AND " + cond + " ORDER BY " + page.OrderBy(order) + " LIMIT ?", page.Fetch()
//	paged := store.Paginate(page, rows, func(k Key) store.Cursor { ... }) // Rows, Next, Prev
//
// A handler reads the page from the query string with ParsePage and puts
// next and prev (nil when there is none) into "Next" and "Previous" links.

// Order is a list's order: by Key, then by ID.
type Order struct {
	Key     string // SQL expression of the sort key
	KeyDesc bool
	ID      string // SQL column of the row's unique id
	IDDesc  bool
	Numeric bool // the key is an integer (compared as one)
}

// Cursor is a row's place in its list: its sort key and id.
type Cursor struct {
	Key string
	ID  string
}

// String is the cursor as a link carries it.
func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.Key + "\x00" + c.ID))
}

// ErrBadCursor is a cursor that Warden did not write.
var ErrBadCursor = errors.New("the page link is not one Warden wrote; start from the first page")

// ParseCursor reads a cursor from a link.
func ParseCursor(s string) (Cursor, error) {
	if len(s) > 512 {
		return Cursor{}, ErrBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, ErrBadCursor
	}
	key, id, ok := strings.Cut(string(raw), "\x00")
	if !ok || id == "" {
		return Cursor{}, ErrBadCursor
	}
	return Cursor{Key: key, ID: id}, nil
}

// Page asks for one page: the rows after After (the next page), or those
// before Before (the previous one), or the first page when neither is set.
type Page struct {
	After  *Cursor
	Before *Cursor
	Size   int
}

// MaxPageSize bounds every page.
const MaxPageSize = 500

// ParsePage reads a page from the query parameters after and before
// (cursors, at most one of them) with the list's page size.
func ParsePage(after, before string, size int) (Page, error) {
	p := Page{Size: min(max(size, 1), MaxPageSize)}
	switch {
	case after != "" && before != "":
		return Page{}, ErrBadCursor
	case after != "":
		c, err := ParseCursor(after)
		if err != nil {
			return Page{}, err
		}
		p.After = &c
	case before != "":
		c, err := ParseCursor(before)
		if err != nil {
			return Page{}, err
		}
		p.Before = &c
	}
	return p, nil
}

// First reports whether the page is the list's first.
func (p Page) First() bool { return p.After == nil && p.Before == nil }

// Fetch is the LIMIT to query: one row more than the page shows, to know
// whether there is more.
func (p Page) Fetch() int { return p.Size + 1 }

// Where is the condition that selects the rows past the page's cursor in
// order o, with its arguments; "" (and no arguments) on the first page.
// A cursor whose key is not a number for a Numeric order selects nothing.
func (p Page) Where(o Order) (string, []any) {
	c, forward := p.After, true
	if c == nil {
		c, forward = p.Before, false
	}
	if c == nil {
		return "", nil
	}
	var key any = c.Key
	if o.Numeric {
		n, err := strconv.ParseInt(c.Key, 10, 64)
		if err != nil {
			return "1 = 0", nil
		}
		key = n
	}
	keyOp, idOp := ">", ">"
	if o.KeyDesc == forward {
		keyOp = "<"
	}
	if o.IDDesc == forward {
		idOp = "<"
	}
	return "(" + o.Key + " " + keyOp + " ? OR (" + o.Key + " = ? AND " + o.ID + " " + idOp + " ?))", []any{key, key, c.ID}
}

// Seek is Where with a bound on the key alone in front ("k <= ? AND
// (...)"): the same rows, in a form an index on (key, id) can seek to, so
// that a page deep in a long list reads its own rows and not every row
// before them. "" (and no arguments) on the first page.
func (p Page) Seek(o Order) (string, []any) {
	cond, args := p.Where(o)
	if cond == "" || len(args) == 0 {
		return cond, args
	}
	op := ">="
	if o.KeyDesc == (p.After != nil) {
		op = "<="
	}
	return o.Key + " " + op + " ? AND " + cond, append([]any{args[0]}, args...)
}

// OrderBy is the ORDER BY clause (without the keywords) that reads the
// page: the list's order, or its reverse when going back.
func (p Page) OrderBy(o Order) string {
	keyDesc, idDesc := o.KeyDesc, o.IDDesc
	if p.Before != nil {
		keyDesc, idDesc = !keyDesc, !idDesc
	}
	dir := func(desc bool) string {
		if desc {
			return " DESC"
		}
		return ""
	}
	return o.Key + dir(keyDesc) + ", " + o.ID + dir(idDesc)
}

// Paged is one page of a list: its rows in the list's order, and the
// cursors of the next and previous pages (nil when there is none).
type Paged[T any] struct {
	Rows       []T
	Next, Prev *Cursor
}

// Paginate turns the rows a page's query fetched (at most Fetch, in the
// query's order) into the page.
func Paginate[T any](p Page, rows []T, cursor func(T) Cursor) Paged[T] {
	shown, next, prev := paginate(p, rows, cursor)
	return Paged[T]{Rows: shown, Next: next, Prev: prev}
}

func paginate[T any](p Page, rows []T, cursor func(T) Cursor) (shown []T, next, prev *Cursor) {
	more := len(rows) > p.Size
	if more {
		rows = rows[:p.Size]
	}
	if p.Before != nil {
		slices.Reverse(rows)
	}
	if len(rows) == 0 {
		return rows, nil, nil
	}
	first, last := cursor(rows[0]), cursor(rows[len(rows)-1])
	switch {
	case p.Before != nil:
		next = &last // we came back from there
		if more {
			prev = &first
		}
	default:
		if more {
			next = &last
		}
		if p.After != nil {
			prev = &first
		}
	}
	return rows, next, prev
}

// PrefixRange is the range of strings that start with prefix, for a
// prefix search an index can seek to: lo <= s < hi. hi is prefix with its
// last character the next one, so the range holds exactly the strings
// with the prefix under a byte-wise (SQLite's BINARY, PostgreSQL's "C")
// collation; under another one, check the prefix of what comes back. An
// empty prefix, or one whose last character has no next, has no upper
// bound ("").
func PrefixRange(prefix string) (lo, hi string) {
	rs := []rune(prefix)
	if len(rs) == 0 {
		return "", ""
	}
	last := rs[len(rs)-1] + 1
	if last == 0xD800 { // the surrogates are not characters
		last = 0xE000
	}
	if last > utf8.MaxRune {
		return prefix, ""
	}
	rs[len(rs)-1] = last
	return prefix, string(rs)
}
