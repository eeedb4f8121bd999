package audit

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ExportReport is what VerifyExport found. The export is verified when
// Problem is empty; otherwise Problem is the first thing wrong, and Row
// names the row it is about (0 when it is about the manifest or the file
// as a whole).
type ExportReport struct {
	Format string
	Rows   int64 // rows read and checked
	// Key is the public key the signature was checked with, as
	// FormatPublicKey writes it. KeyFromManifest says it was the
	// manifest's own: that proves the manifest was not changed after
	// signing, but not who signed it, unless the key is compared with the
	// installation's.
	Key             string
	KeyFromManifest bool
	// Continuity says the rows were checked to be one unbroken stretch of
	// the chain from the manifest's start hash to its end hash. It is
	// false for a filtered export, whose rows were each checked alone.
	Continuity bool
	Problem    string
	Row        int64 // 1 for the first row after any header
	Seq        int64 // the seq of that row, when it could be read
}

// OK reports whether the export verified.
func (r ExportReport) OK() bool { return r.Problem == "" }

// maxExportLine bounds one JSONL row. Details are at most 64 KiB and the
// other fields 512 bytes; escaping at most doubles them.
const maxExportLine = 1 << 20

// VerifyExport checks an export file against its manifest, without the
// database: the manifest's signature (with pub, or the manifest's own key
// when pub is nil), every row's hash recomputed from its fields, the rows'
// order and agreement with the manifest's filters, the row count, first
// and last seq, start and end hash, the file's SHA-256 and — when the
// manifest claims the rows are contiguous — that each row links to the one
// before.
//
// The error is for a file that cannot be read; everything wrong with what
// was read is in the report.
func VerifyExport(r io.Reader, m Manifest, pub ed25519.PublicKey) (ExportReport, error) {
	rep := ExportReport{Format: m.Format, Continuity: m.Contiguous}
	whose := "the given public key"
	if pub == nil {
		rep.KeyFromManifest, whose = true, "the public key in the manifest"
		k, err := ParsePublicKey(m.PublicKey)
		if err != nil {
			rep.Problem = "the manifest's public_key: " + err.Error()
			return rep, nil
		}
		pub = k
	}
	if len(pub) != ed25519.PublicKeySize {
		return rep, errors.New("verify export: the public key is not an Ed25519 key")
	}
	rep.Key = FormatPublicKey(pub)
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, m.SignedBytes(), sig) {
		rep.Problem = "the manifest's signature does not verify with " + whose +
			": the manifest was changed after it was signed, or signed with another key"
		return rep, nil
	}
	if reason := m.check(); reason != "" {
		rep.Problem = reason
		return rep, nil
	}

	src := &readErr{r: r}
	sum := sha256.New()
	in := io.TeeReader(src, sum)
	v := exportVerifier{m: m, rep: &rep}
	if m.Format == FormatCSV {
		readCSV(in, &v)
	} else {
		readJSONL(in, &v)
	}
	if src.err != nil {
		return rep, fmt.Errorf("verify export: read the file: %w", src.err)
	}
	if !rep.OK() {
		return rep, nil
	}
	if _, err := io.Copy(io.Discard, in); err != nil {
		return rep, fmt.Errorf("verify export: read the file: %w", err)
	}
	if v.end(); !rep.OK() {
		return rep, nil
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != m.SHA256 {
		rep.Problem = fmt.Sprintf("the file's SHA-256 is %s but the manifest says %s: the file was changed", got, m.SHA256)
	}
	return rep, nil
}

// check reports what is inconsistent in a signed manifest: only a writer
// that is not Warden's produces one, but a verifier should not trust its
// claims blindly.
func (m Manifest) check() string {
	hexOK := func(s string) bool { return hashRe.MatchString(s) }
	switch {
	case m.Version != ExportVersion && m.Version != ExportVersionV1:
		return fmt.Sprintf("the manifest's version %q is not %s or %s", m.Version, ExportVersion, ExportVersionV1)
	case m.Format != FormatJSONL && m.Format != FormatCSV:
		return fmt.Sprintf("the manifest's format %q is not %s or %s", m.Format, FormatJSONL, FormatCSV)
	case m.Unfiltered != m.Filters.unfiltered():
		return "the manifest's unfiltered flag contradicts its filters"
	case m.Contiguous && !m.Unfiltered:
		return "the manifest claims a filtered export is contiguous"
	case !hexOK(m.SHA256):
		return "the manifest's sha256 is not 64 lowercase hex digits"
	case m.Rows < 0:
		return "the manifest's row count is negative"
	case m.Rows == 0 && (m.FirstSeq != 0 || m.LastSeq != 0 || m.StartHash != "" || m.EndHash != ""):
		return "the manifest has no rows but names a first or last row"
	case m.Rows > 0 && (m.FirstSeq < 1 || m.LastSeq < m.FirstSeq || !hexOK(m.StartHash) || !hexOK(m.EndHash)):
		return "the manifest's first_seq, last_seq, start_hash or end_hash is malformed"
	case m.Rows > 0 && m.Contiguous && m.LastSeq-m.FirstSeq+1 != m.Rows:
		return fmt.Sprintf("the manifest claims %d contiguous rows from seq %d to seq %d", m.Rows, m.FirstSeq, m.LastSeq)
	}
	return ""
}

// readErr remembers the first error of the underlying reader, so a
// failure to read is told apart from a file that reads but is wrong.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// exportVerifier checks rows one at a time, keeping only the row before.
type exportVerifier struct {
	m    Manifest
	rep  *ExportReport
	prev record
}

func (v *exportVerifier) fail(n int64, seq int64, reason string) {
	v.rep.Problem, v.rep.Row, v.rep.Seq = reason, n, seq
}

// row checks the n-th row and reports whether to go on. x is the row as
// read, for a version 2 export's derived columns; nil for version 1.
func (v *exportVerifier) row(n int64, r record, x *exportRow) bool {
	v.rep.Rows = n
	m := v.m
	reason := ""
	switch {
	case n > m.Rows:
		reason = fmt.Sprintf("the file has more rows than the manifest's %d", m.Rows)
	case r.seq < 1:
		reason = fmt.Sprintf("seq %d is not a positive number", r.seq)
	case r.computeHash() != r.hash:
		reason = "hash does not match the row's fields"
	case n == 1 && r.seq != m.FirstSeq:
		reason = fmt.Sprintf("the first row is seq %d but the manifest's first_seq is %d", r.seq, m.FirstSeq)
	case n == 1 && r.prevHash != m.StartHash:
		reason = "prev_hash of the first row differs from the manifest's start_hash"
	case r.seq == 1 && r.prevHash != GenesisHash:
		reason = "prev_hash of seq 1 is not the genesis hash"
	case n > 1 && r.seq <= v.prev.seq:
		reason = fmt.Sprintf("seq %d follows seq %d: the rows are out of order", r.seq, v.prev.seq)
	case n > 1 && m.Contiguous && r.seq != v.prev.seq+1:
		reason = fmt.Sprintf("seq %d follows seq %d in an export that claims to be contiguous: events are missing", r.seq, v.prev.seq)
	case n > 1 && m.Contiguous && r.prevHash != v.prev.hash:
		reason = fmt.Sprintf("prev_hash does not match the hash of seq %d before it", v.prev.seq)
	case !m.Unfiltered && !m.Filters.match(r):
		reason = "the row does not match the export's filters"
	case x != nil:
		reason = checkDerived(*x)
		if reason == "" {
			reason = r.checkCanonical()
		}
	default:
		reason = r.checkCanonical()
	}
	if reason != "" {
		v.fail(n, r.seq, reason)
		return false
	}
	v.prev = r
	return true
}

// checkDerived reports a version 2 row whose actor name, e-mail or amount
// is not what its hashed details say: those columns are read from the
// details, so the event hash covers them too.
func checkDerived(x exportRow) string {
	name, email, amount := derivedColumns(x.Details)
	switch {
	case x.ActorName != name:
		return fmt.Sprintf("actor_name %q is not the name the hashed details record (%q)", short(x.ActorName), short(name))
	case x.ActorEmail != email:
		return fmt.Sprintf("actor_email %q is not the e-mail the hashed details record (%q)", short(x.ActorEmail), short(email))
	case x.Amount != amount:
		return fmt.Sprintf("amount %q is not the amount the hashed details record (%q)", short(x.Amount), short(amount))
	}
	return ""
}

// end checks, once every row is in, that the file holds what the manifest
// says.
func (v *exportVerifier) end() {
	m := v.m
	switch {
	case v.rep.Rows != m.Rows:
		v.fail(0, 0, fmt.Sprintf("the file has %d rows but the manifest says %d: rows were removed", v.rep.Rows, m.Rows))
	case m.Rows > 0 && v.prev.seq != m.LastSeq:
		v.fail(v.rep.Rows, v.prev.seq, fmt.Sprintf("the last row is seq %d but the manifest's last_seq is %d", v.prev.seq, m.LastSeq))
	case m.Rows > 0 && v.prev.hash != m.EndHash:
		v.fail(v.rep.Rows, v.prev.seq, "the last row's hash differs from the manifest's end_hash")
	}
}

// match reports whether a row is one the filters select (as Query.Where
// does; times compare as text, which TimeFormat orders).
func (f ExportFilters) match(r record) bool {
	verbOK := f.Verb == "" || r.verb == f.Verb || strings.HasSuffix(f.Verb, ".") && strings.HasPrefix(r.verb, f.Verb)
	return verbOK &&
		(f.Tenant == "" || slices.Contains(strings.Split(f.Tenant, ","), r.tenant)) &&
		(f.Actor == "" || r.actorID == f.Actor) &&
		(f.SubjectType == "" || r.subjectType == f.SubjectType) &&
		(f.SubjectID == "" || r.subjectID == f.SubjectID) &&
		(f.Since == "" || r.time >= f.Since) &&
		(f.Until == "" || r.time < f.Until)
}

// readJSONL feeds each line of a JSONL export to v.
func readJSONL(in io.Reader, v *exportVerifier) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxExportLine)
	v1 := v.m.Version == ExportVersionV1
	var n int64
	for sc.Scan() {
		n++
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var x exportRow
		var x1 Row
		var err error
		if v1 {
			err = dec.Decode(&x1)
			x.Seq = x1.Seq
		} else {
			err = dec.Decode(&x)
		}
		if err != nil {
			v.fail(n, 0, "not a row: "+err.Error())
			return
		}
		if _, err := dec.Token(); err != io.EOF {
			v.fail(n, x.Seq, "not a row: text after the JSON object")
			return
		}
		ok := false
		if v1 {
			ok = v.row(n, x1.record(), nil)
		} else {
			ok = v.row(n, x.record(), &x)
		}
		if !ok {
			return
		}
	}
	if err := sc.Err(); err != nil {
		v.fail(n+1, 0, "not a row: "+err.Error())
	}
}

// readCSV feeds each record of a CSV export to v, after its header.
func readCSV(in io.Reader, v *exportVerifier) {
	columns := exportColumns
	if v.m.Version == ExportVersionV1 {
		columns = exportColumnsV1
	}
	cr := csv.NewReader(in)
	cr.FieldsPerRecord = len(columns)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil || !slices.Equal(head, columns) {
		v.fail(0, 0, "the first line is not the header "+strings.Join(columns, ","))
		return
	}
	for n := int64(1); ; n++ {
		cells, err := cr.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			v.fail(n, 0, "not a row: "+err.Error())
			return
		}
		col := make(map[string]string, len(cells))
		for i := range cells {
			col[columns[i]] = uncsvCell(cells[i])
		}
		seq, err := strconv.ParseInt(col["seq"], 10, 64)
		if err != nil {
			v.fail(n, 0, fmt.Sprintf("not a row: seq %q is not a number", col["seq"]))
			return
		}
		x := exportRow{Seq: seq, Time: col["time"], ActorType: col["actor_type"], ActorID: col["actor_id"],
			ActorName: col["actor_name"], ActorEmail: col["actor_email"], Tenant: col["tenant"], Verb: col["verb"],
			SubjectType: col["subject_type"], SubjectID: col["subject_id"], Sentence: col["sentence"],
			Amount: col["amount"], Details: col["details"], PrevHash: col["prev_hash"], Hash: col["hash"]}
		derived := &x
		if v.m.Version == ExportVersionV1 {
			derived = nil
		}
		if !v.row(n, x.record(), derived) {
			return
		}
	}
}
