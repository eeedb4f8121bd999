// Package canon writes canonical JSON, the form Warden hashes: an
// approval's payload digest and a release bundle's digest are the SHA-256
// of it, so the same value always has the same digest whatever order or
// spacing it was sent in.
package canon

import (
	"bytes"
	"encoding/json"
)

// JSON returns raw's canonical JSON: object keys sorted, no insignificant
// white space, numbers as written, no HTML escaping.
func JSON(raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
