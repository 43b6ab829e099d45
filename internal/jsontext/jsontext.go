// Package jsontext writes JSON as every format and --json output of
// assemble writes it: <, > and & left as they are (a user ID's
// "Name <mail>", a CloudFormation output holding a URL's query), not
// escaped as encoding/json does for HTML.
package jsontext

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal without HTML escaping: compact, no final
// newline.
func Marshal(v any) ([]byte, error) {
	b, err := encode(v, false)
	return bytes.TrimSuffix(b, []byte("\n")), err
}

// MarshalIndent is v indented by two spaces, without HTML escaping, and
// ending with a newline: the form of the files assemble writes
// (manifest.json, the attestation, provenance, outputs files).
func MarshalIndent(v any) ([]byte, error) { return encode(v, true) }

func encode(v any, indent bool) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
