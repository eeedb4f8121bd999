package audit

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/store"
)

// Exports: the trail, or the part of it a Query selects, as a file an
// auditor can check without Warden's database (docs/audit-format.md,
// "Exports").
//
//	m, err := audit.Export(ctx, db.Read(), q, audit.FormatJSONL, describe, file, signer, time.Now())
//	// write m with WriteManifest next to the file; later, anywhere:
//	rep, err := audit.VerifyExport(file, m, trustedKey) // rep.OK(), rep.Problem
//
// Each row is an event exactly as stored, prev_hash and hash included, so
// its hash can be recomputed from the file alone. The manifest names the
// rows (count, first and last seq, the chain hash before the first and at
// the last), the file's SHA-256 and the filters, and is signed with the
// installation's audit key. An unfiltered export is one unbroken stretch
// of the chain and its manifest claims so; a filtered one leaves events
// out, so only each row, not the stretch between them, can be checked.

// Export formats.
const (
	FormatJSONL = "jsonl"
	FormatCSV   = "csv"
)

// ExportVersion names the manifest's format and is the first field of the
// bytes its signature covers, which keeps an export signature from ever
// being mistaken for any other signature of the audit key. Version 2 rows
// carry, besides the stored fields, the actor's recorded name and e-mail,
// the event's sentence and its amount; ExportVersionV1 files, with the
// stored fields only, still verify.
const (
	ExportVersion   = "warden-audit-export-v2"
	ExportVersionV1 = "warden-audit-export-v1"
)

// exportColumns are the fields of an exported row, in order: the CSV
// header, and the JSONL keys. actor_name, actor_email and amount are
// derived from the stored details (derivedColumns), sentence is the
// console's reading of the event; the others are the stored fields.
var exportColumns = []string{"seq", "time", "actor_type", "actor_id", "actor_name", "actor_email", "tenant", "verb",
	"subject_type", "subject_id", "sentence", "amount", "details", "prev_hash", "hash"}

// exportColumnsV1 are the columns of a version 1 export: the stored
// fields only.
var exportColumnsV1 = []string{"seq", "time", "actor_type", "actor_id", "tenant", "verb",
	"subject_type", "subject_id", "details", "prev_hash", "hash"}

// Describe says what each event records in one sentence a person reads,
// for an export's sentence column: the console's sentence for it. Export
// calls it with one chunk of events at a time and wants one sentence per
// event. It must give the same sentences for the same events whenever it
// is called, from what does not change (the event itself, an action's
// summary, a key's name): the console's manifest download makes the export
// again and must hash the same bytes.
type Describe func(ctx context.Context, events []Event) ([]string, error)

// exportChunk is how many rows one query of Export reads. Reading in
// keyset chunks keeps memory flat and returns the connection to the pool
// between chunks, so a slow download does not hold one for its duration.
const exportChunk = 1000

// ExportFilters are an export's filters as the manifest records them: the
// Query's fields, times in TimeFormat, "" for none.
type ExportFilters struct {
	Tenant      string `json:"tenant"`
	Actor       string `json:"actor"`
	Verb        string `json:"verb"`
	SubjectType string `json:"subject_type"`
	SubjectID   string `json:"subject_id"`
	Since       string `json:"since"`
	Until       string `json:"until"`
}

// Manifest describes one export file and is signed by the installation's
// audit key. Every field but Signature is covered by the signature, in the
// order of SignedBytes.
type Manifest struct {
	Version  string        `json:"version"` // ExportVersion
	Format   string        `json:"format"`  // FormatJSONL or FormatCSV
	Filters  ExportFilters `json:"filters"`
	Rows     int64         `json:"rows"`
	FirstSeq int64         `json:"first_seq"` // 0 when there are no rows
	LastSeq  int64         `json:"last_seq"`
	// StartHash is the chain hash just before the first row (that row's
	// prev_hash); EndHash is the hash of the last row. Both are "" when
	// there are no rows.
	StartHash string `json:"start_hash"`
	EndHash   string `json:"end_hash"`
	SHA256    string `json:"sha256"`     // of the export file's bytes, lowercase hex
	CreatedAt string `json:"created_at"` // TimeFormat
	// Unfiltered is true when no filter but the time range was set.
	Unfiltered bool `json:"unfiltered"`
	// Contiguous claims that the rows are consecutive events of the
	// chain, each linked to the one before, from StartHash to EndHash: no
	// event of that stretch is missing. Export claims it for every
	// unfiltered export and never for a filtered one.
	Contiguous bool   `json:"contiguous"`
	PublicKey  string `json:"public_key"` // "ed25519:<base64>"
	Signature  string `json:"signature"`  // Ed25519 over SignedBytes, standard base64
}

// SignedBytes is what the manifest's signature covers: the fields below,
// in this order, each as the 4-byte big-endian length of its UTF-8 text
// followed by the text — the encoding the event hash uses.
//
//	version, format, filters.tenant, filters.actor, filters.verb,
//	filters.subject_type, filters.subject_id, filters.since, filters.until,
//	rows, first_seq, last_seq (decimal), start_hash, end_hash, sha256,
//	created_at, unfiltered, contiguous ("true" or "false"), public_key
func (m Manifest) SignedBytes() []byte {
	fields := [...]string{
		m.Version, m.Format,
		m.Filters.Tenant, m.Filters.Actor, m.Filters.Verb, m.Filters.SubjectType,
		m.Filters.SubjectID, m.Filters.Since, m.Filters.Until,
		strconv.FormatInt(m.Rows, 10), strconv.FormatInt(m.FirstSeq, 10), strconv.FormatInt(m.LastSeq, 10),
		m.StartHash, m.EndHash, m.SHA256, m.CreatedAt,
		strconv.FormatBool(m.Unfiltered), strconv.FormatBool(m.Contiguous), m.PublicKey,
	}
	var out []byte
	for _, f := range fields {
		out = binary.BigEndian.AppendUint32(out, uint32(len(f)))
		out = append(out, f...)
	}
	return out
}

// exportFilters is how the manifest records q.
func exportFilters(q Query) ExportFilters {
	f := ExportFilters{Tenant: q.Tenant, Actor: q.ActorID, Verb: q.Verb, SubjectType: q.SubjectType, SubjectID: q.SubjectID}
	if q.Tenant == "" && q.Tenants != nil {
		// A principal's tenant scope: the tenants, comma-separated (a
		// slug holds no comma). An export of it is filtered.
		f.Tenant = strings.Join(q.Tenants, ",")
	}
	if !q.Since.IsZero() {
		f.Since = q.Since.UTC().Format(TimeFormat)
	}
	if !q.Until.IsZero() {
		f.Until = q.Until.UTC().Format(TimeFormat)
	}
	return f
}

// unfiltered reports whether the filters keep every event of their time
// range.
func (f ExportFilters) unfiltered() bool {
	return f.Tenant == "" && f.Actor == "" && f.Verb == "" && f.SubjectType == "" && f.SubjectID == ""
}

// Export writes the events q selects to w in format, oldest first, and
// returns the signed manifest of what it wrote. It reads in keyset chunks
// and holds one chunk at a time, so memory stays flat however many rows
// there are.
//
// The rows are fixed when Export starts: events appended meanwhile are not
// included. An unfiltered export is the stretch of the chain from the
// first event at or after q.Since to the last before q.Until, all events
// between included; Warden stamps events in the order it chains them, so
// that is exactly the events of the period. A filtered export is the events
// matching q, as the audit page lists them.
//
// w receives the file as it is made; if Export fails part way, what was
// written is not a valid export and no manifest is returned.
//
// describe writes the sentence column; with nil the column is empty.
func Export(ctx context.Context, db Querier, q Query, format string, describe Describe, w io.Writer, signer *Signer, now time.Time) (Manifest, error) {
	if format != FormatJSONL && format != FormatCSV {
		return Manifest{}, fmt.Errorf("export audit events: unknown format %q (want %s or %s)", format, FormatJSONL, FormatCSV)
	}
	if signer == nil {
		return Manifest{}, errors.New("export audit events: no signing key")
	}
	if err := CheckQuery(q); err != nil {
		return Manifest{}, fmt.Errorf("export audit events: %w", err)
	}
	if q.Tenants != nil && len(q.Tenants) == 0 {
		return Manifest{}, errors.New("export audit events: an empty tenant scope selects nothing to export")
	}
	m := Manifest{Version: ExportVersion, Format: format, Filters: exportFilters(q)}
	m.Unfiltered = m.Filters.unfiltered()
	m.Contiguous = m.Unfiltered

	lo, hi, cond, args, err := exportRange(ctx, db, q, m.Unfiltered)
	if err != nil {
		return Manifest{}, fmt.Errorf("export audit events: %w", err)
	}
	sum := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(w, sum), 64<<10)
	rw := newRowWriter(format, bw)
	if err := rw.header(); err != nil {
		return Manifest{}, fmt.Errorf("export audit events: %w", err)
	}
	query := selectEvents + " WHERE "
	if cond != "" {
		query += "(" + cond + ") AND "
	}
	query += "seq > ? AND seq <= ? ORDER BY seq LIMIT ?"
	after := lo - 1
	chunk := make([]record, 0, exportChunk)
	for after < hi {
		var err error
		chunk, err = exportChunkRows(ctx, db, query, append(slices.Clip(args), after, hi, exportChunk), chunk[:0])
		if err == nil {
			err = writeChunk(ctx, rw, chunk, describe)
		}
		if err != nil {
			return Manifest{}, fmt.Errorf("export audit events after seq %d: %w", after, err)
		}
		for _, r := range chunk {
			if m.Rows == 0 {
				m.FirstSeq, m.StartHash = r.seq, r.prevHash
			}
			m.Rows++
			m.LastSeq, m.EndHash = r.seq, r.hash
			after = r.seq
		}
		if len(chunk) < exportChunk {
			break
		}
	}
	if err := rw.flush(); err != nil {
		return Manifest{}, fmt.Errorf("export audit events: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return Manifest{}, fmt.Errorf("export audit events: %w", err)
	}
	m.SHA256 = hex.EncodeToString(sum.Sum(nil))
	m.CreatedAt = now.UTC().Format(TimeFormat)
	m.PublicKey = signer.PublicKeyText()
	m.Signature = base64.StdEncoding.EncodeToString(signer.Sign(m.SignedBytes()))
	return m, nil
}

// CheckQuery refuses filters no event Warden writes could match: too long,
// or holding control characters (docs/audit-format.md, section 3); and
// times outside the years TimeFormat can write. Its message names the
// filter.
func CheckQuery(q Query) error {
	for _, f := range []struct{ name, value string }{
		{"tenant", q.Tenant}, {"actor", q.ActorID}, {"verb", q.Verb},
		{"subject type", q.SubjectType}, {"subject id", q.SubjectID},
	} {
		if err := checkText(f.value); err != nil {
			return fmt.Errorf("%s filter: %w", f.name, err)
		}
	}
	if y := q.Since.UTC().Year(); !q.Since.IsZero() && (y < 0 || y > 9999) {
		return fmt.Errorf("since %v is outside years 0000-9999", q.Since)
	}
	if y := q.Until.UTC().Year(); !q.Until.IsZero() && (y < 0 || y > 9999) {
		return fmt.Errorf("until %v is outside years 0000-9999", q.Until)
	}
	return nil
}

// exportRange fixes the rows of an export before the first is read: seqs
// lo..hi, and for a filtered export the condition they must also meet.
// hi is the newest seq at the start, so events appended during the export
// are left out. An empty export has hi < lo.
func exportRange(ctx context.Context, db Querier, q Query, unfiltered bool) (lo, hi int64, cond string, args []any, err error) {
	if !unfiltered {
		cond, args = q.Where()
		err = db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM audit_events`).Scan(&hi)
		return 1, hi, cond, args, err
	}
	lo = 1
	if !q.Since.IsZero() {
		err = db.QueryRowContext(ctx, `SELECT seq FROM audit_events WHERE time >= ? ORDER BY seq LIMIT 1`,
			q.Since.UTC().Format(TimeFormat)).Scan(&lo)
		if errors.Is(err, sql.ErrNoRows) {
			return 1, 0, "", nil, nil
		}
		if err != nil {
			return 0, 0, "", nil, err
		}
	}
	if q.Until.IsZero() {
		err = db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM audit_events`).Scan(&hi)
	} else {
		err = db.QueryRowContext(ctx, `SELECT seq FROM audit_events WHERE time < ? ORDER BY seq DESC LIMIT 1`,
			q.Until.UTC().Format(TimeFormat)).Scan(&hi)
		if errors.Is(err, sql.ErrNoRows) {
			return 1, 0, "", nil, nil
		}
	}
	return lo, hi, "", nil, err
}

// exportChunkRows runs one chunk's query and appends its rows to out. The
// rows are read in full before they are written, so the query's
// connection is back in the pool while describe looks up names.
func exportChunkRows(ctx context.Context, db Querier, query string, args []any, out []record) ([]record, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// writeChunk writes one chunk of rows with their sentences.
func writeChunk(ctx context.Context, rw rowWriter, chunk []record, describe Describe) error {
	var sentences []string
	if describe != nil && len(chunk) > 0 {
		evs := make([]Event, len(chunk))
		for i, r := range chunk {
			// A row Warden did not write is described by its fields
			// alone, and its hash check will fail.
			evs[i] = r.shown()
		}
		var err error
		if sentences, err = describe(ctx, evs); err != nil {
			return fmt.Errorf("describe events: %w", err)
		}
		if len(sentences) != len(chunk) {
			return fmt.Errorf("describe events: %d sentences for %d events", len(sentences), len(chunk))
		}
	}
	for i, r := range chunk {
		x := exportRowOf(r)
		if sentences != nil {
			x.Sentence = oneLine(sentences[i])
		}
		if err := rw.row(x); err != nil {
			return err
		}
	}
	return nil
}

// oneLine keeps a sentence on one line of a spreadsheet.
func oneLine(s string) string {
	return strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return ' '
		}
		return c
	}, s)
}

// derivedColumns are the columns of a version 2 row that are read from
// its stored details, so a verifier can check them against the hashed
// text: the actor's recorded name and e-mail (ActorDetailsKey), and the
// amount ("2400.00 USD": amount_minor in the major units of currency),
// "" for what the details do not hold.
func derivedColumns(details string) (name, email, amount string) {
	d, err := decodeDetails(details)
	if err != nil {
		return "", "", ""
	}
	name, email = recordedIdentity(d)
	return name, email, detailsAmount(d)
}

// detailsAmount is details' amount_minor (an integer) in currency (an
// ISO 4217 code), in major units followed by the code: "2400.00 USD",
// "-5 JPY". It is "" when either is missing or not understood.
func detailsAmount(d map[string]any) string {
	n, ok := d["amount_minor"].(json.Number)
	code, _ := d["currency"].(string)
	if !ok || code == "" {
		return ""
	}
	minor, err := n.Int64()
	if err != nil {
		return ""
	}
	c, err := money.ParseCurrency(code)
	if err != nil {
		return ""
	}
	s := money.Decimal(money.Amount{Minor: minor, Currency: c}, false) + " " + c.Code
	if minor < 0 {
		s = "-" + s
	}
	return s
}

// exportRow is a row of an export: the stored fields as text (details too,
// as the exact stored JSON text, so that a verifier hashes what is stored
// without re-serialising it), and in version 2 the derived columns.
type exportRow struct {
	Seq         int64  `json:"seq"`
	Time        string `json:"time"`
	ActorType   string `json:"actor_type"`
	ActorID     string `json:"actor_id"`
	ActorName   string `json:"actor_name"`
	ActorEmail  string `json:"actor_email"`
	Tenant      string `json:"tenant"`
	Verb        string `json:"verb"`
	SubjectType string `json:"subject_type"`
	SubjectID   string `json:"subject_id"`
	Sentence    string `json:"sentence"`
	Amount      string `json:"amount"`
	Details     string `json:"details"`
	PrevHash    string `json:"prev_hash"`
	Hash        string `json:"hash"`
}

// Row is one audit_events row as text, the way an outside verifier reads
// it: the columns of the table, and exactly a line of a version 1 export
// (version 2 adds actor_name, actor_email, sentence and amount). The
// tests read the table through it too.
type Row struct {
	Seq         int64  `json:"seq"`
	Time        string `json:"time"`
	ActorType   string `json:"actor_type"`
	ActorID     string `json:"actor_id"`
	Tenant      string `json:"tenant"`
	Verb        string `json:"verb"`
	SubjectType string `json:"subject_type"`
	SubjectID   string `json:"subject_id"`
	Details     string `json:"details"`
	PrevHash    string `json:"prev_hash"`
	Hash        string `json:"hash"`
}

// exportRowOf is r as a version 2 row, without its sentence.
func exportRowOf(r record) exportRow {
	name, email, amount := derivedColumns(r.details)
	return exportRow{Seq: r.seq, Time: r.time, ActorType: r.actorType, ActorID: r.actorID,
		ActorName: name, ActorEmail: email, Tenant: r.tenant, Verb: r.verb,
		SubjectType: r.subjectType, SubjectID: r.subjectID, Amount: amount,
		Details: r.details, PrevHash: r.prevHash, Hash: r.hash}
}

func (x exportRow) record() record {
	return record{seq: x.Seq, time: x.Time, actorType: x.ActorType, actorID: x.ActorID, tenant: x.Tenant,
		verb: x.Verb, subjectType: x.SubjectType, subjectID: x.SubjectID, details: x.Details,
		prevHash: x.PrevHash, hash: x.Hash}
}

func (x Row) record() record {
	return exportRow{Seq: x.Seq, Time: x.Time, ActorType: x.ActorType, ActorID: x.ActorID, Tenant: x.Tenant,
		Verb: x.Verb, SubjectType: x.SubjectType, SubjectID: x.SubjectID, Details: x.Details,
		PrevHash: x.PrevHash, Hash: x.Hash}.record()
}

type rowWriter interface {
	header() error
	row(x exportRow) error
	flush() error
}

func newRowWriter(format string, w io.Writer) rowWriter {
	if format == FormatCSV {
		cw := csv.NewWriter(w)
		cw.UseCRLF = true // RFC 4180
		return &csvRowWriter{w: cw, cells: make([]string, len(exportColumns))}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &jsonlRowWriter{enc: enc}
}

// jsonlRowWriter writes one JSON object a line, keys in exportColumns order.
type jsonlRowWriter struct{ enc *json.Encoder }

func (j *jsonlRowWriter) header() error { return nil }

func (j *jsonlRowWriter) row(x exportRow) error { return j.enc.Encode(x) }

func (j *jsonlRowWriter) flush() error { return nil }

// csvRowWriter writes RFC 4180 CSV: a header, then one record a row, each
// cell through csvCell.
type csvRowWriter struct {
	w     *csv.Writer
	cells []string
}

func (c *csvRowWriter) header() error { return c.w.Write(exportColumns) }

func (c *csvRowWriter) row(x exportRow) error {
	for i, v := range x.cells() {
		c.cells[i] = csvCell(v)
	}
	return c.w.Write(c.cells)
}

// cells are the row's values in exportColumns order.
func (x exportRow) cells() [15]string {
	return [...]string{strconv.FormatInt(x.Seq, 10), x.Time, x.ActorType, x.ActorID, x.ActorName, x.ActorEmail,
		x.Tenant, x.Verb, x.SubjectType, x.SubjectID, x.Sentence, x.Amount, x.Details, x.PrevHash, x.Hash}
}

func (c *csvRowWriter) flush() error {
	c.w.Flush()
	return c.w.Error()
}

// csvCell guards a value against spreadsheets, which run a cell that
// begins with =, +, - or @ (or a tab or carriage return before one) as a
// formula: such a value gets one ' in front. So does a value that already
// begins with ', which makes the rule reversible: a reader removes one
// leading ' from every cell that has one (uncsvCell), and gets the value
// back exactly.
func csvCell(v string) string {
	if v != "" && strings.IndexByte("=+-@\t\r'", v[0]) >= 0 {
		return "'" + v
	}
	return v
}

// uncsvCell undoes csvCell.
func uncsvCell(v string) string { return strings.TrimPrefix(v, "'") }

// WriteManifest writes m as indented JSON, as PATH.manifest.json holds it.
func WriteManifest(w io.Writer, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadManifest reads a manifest WriteManifest wrote. Unknown fields are
// refused: nothing unsigned may ride along in a manifest.
func ReadManifest(r io.Reader) (Manifest, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("read export manifest: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Manifest{}, errors.New("read export manifest: text after the JSON object")
	}
	return m, nil
}

// ExportRecorded is what a person's download of an export does, in order:
// it signs the chain's head first (Checkpoint), so the chain the file was
// taken from cannot later lose its tail unnoticed; writes the file to w
// (Export); and then writes the export to the trail (RecordExport), so a
// file that was not written in full is not in the trail either. It returns
// the export's manifest.
func ExportRecorded(ctx context.Context, db *store.DB, q Query, format string, describe Describe, w io.Writer, signer *Signer, actor Actor, now time.Time) (Manifest, error) {
	if _, err := Checkpoint(ctx, db, signer, now); err != nil {
		return Manifest{}, err
	}
	m, err := Export(ctx, db.Read(), q, format, describe, w, signer, now)
	if err != nil {
		return Manifest{}, err
	}
	if err := RecordExport(ctx, db, actor, m); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// RecordExport writes an export to the trail: who made it, of what
// (filters, format), and the rows and file it produced, so the file an
// auditor holds can be traced to its event by its SHA-256. The filters
// are ids and times, never personal data.
func RecordExport(ctx context.Context, db *store.DB, actor Actor, m Manifest) error {
	filters := map[string]any{}
	for k, v := range map[string]string{
		"tenant": m.Filters.Tenant, "actor": m.Filters.Actor, "verb": m.Filters.Verb,
		"subject_type": m.Filters.SubjectType, "subject_id": m.Filters.SubjectID,
		"since": m.Filters.Since, "until": m.Filters.Until,
	} {
		if v != "" {
			filters[k] = v
		}
	}
	return db.Transact(ctx, func(tx *store.Tx) error {
		_, err := Append(ctx, tx, Event{
			Actor:   actor,
			Tenant:  m.Filters.Tenant,
			Verb:    "audit.export",
			Subject: Subject{Type: "audit_export", ID: m.SHA256},
			Details: map[string]any{
				"format": m.Format, "filters": filters, "rows": m.Rows,
				"first_seq": m.FirstSeq, "last_seq": m.LastSeq,
				"sha256": m.SHA256, "contiguous": m.Contiguous,
			},
		})
		return err
	})
}

// ParseTime reads a time bound of a query as people and forms write it:
// RFC 3339 ("2025-06-01T09:30:00Z", fractions and offsets allowed), or in
// UTC a date and time as an HTML datetime-local field sends it
// ("2025-06-01T09:30", seconds optional), or a date ("2025-06-01", its
// midnight).
func ParseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time such as 2025-06-01, 2025-06-01T09:30 (UTC) or 2025-06-01T09:30:00Z", s)
}
