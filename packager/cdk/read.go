package cdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/strictjson"
)

// maxJSONSize bounds every CDK JSON file read (manifests, asset manifests,
// metadata files), as manifest.json is bounded in an assembly.
const maxJSONSize = assembly.MaxManifestSize

// maxJSONReread bounds the bytes of the JSON files read more than once:
// many artifacts naming one large metadata file would read it once each.
// (A first read is bounded by the folder's own size.)
const maxJSONReread = 2 * maxJSONSize

// maxJSONDepth bounds their nesting.
const maxJSONDepth = assembly.MaxManifestDepth

// readJSON reads the file at rel (below the cdk.out, walked) into v: one
// JSON value with no duplicate keys, valid UTF-8, numbers as json.Number.
// Errors name the file, with line:col for syntax errors and the field for
// values of the wrong type.
func (t *tree) readJSON(rel string, v any) error {
	name := t.name(rel)
	f := t.files[rel]
	if f == nil {
		return &Error{File: name, Err: fmt.Errorf("%w: no such file", ErrNotCopied)}
	}
	b, err := limitio.ReadFile(f.real, maxJSONSize)
	var tl *limitio.TooLargeError
	if errors.As(err, &tl) {
		return &Error{File: name, Err: fmt.Errorf("%w: %v", assembly.ErrTooLarge, err)}
	}
	if err != nil {
		return err
	}
	if t.read[rel] {
		if t.reread += int64(len(b)); t.reread > maxJSONReread {
			return &Error{File: name, Err: fmt.Errorf("%w: named by many artifacts, it was read again and again (more than %d bytes)", assembly.ErrTooLarge, int64(maxJSONReread))}
		}
	}
	t.read[rel] = true
	return decodeJSON(name, b, v)
}

func decodeJSON(name string, b []byte, v any) error {
	if _, err := strictjson.Decode(b, maxJSONDepth); err != nil {
		return &Error{File: name, Err: fmt.Errorf("%w: %v", ErrCloudAssembly, err)}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	err := dec.Decode(v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &Error{File: name, Field: te.Field, Err: fmt.Errorf("%w: want %s, got %s", ErrCloudAssembly, kindName(te.Type), article(te.Value))}
	}
	if err != nil {
		return &Error{File: name, Err: fmt.Errorf("%w: %v", ErrCloudAssembly, err)}
	}
	return nil
}

// decodeRaw decodes a part of a file already read (an artifact's
// properties) into v, naming field in errors.
func decodeRaw(name, field string, raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	err := dec.Decode(v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			field += "." + te.Field
		}
		return &Error{File: name, Field: field, Err: fmt.Errorf("%w: want %s, got %s", ErrCloudAssembly, kindName(te.Type), article(te.Value))}
	}
	if err != nil {
		return &Error{File: name, Field: field, Err: fmt.Errorf("%w: %v", ErrCloudAssembly, err)}
	}
	return nil
}

// kindName names a Go type as a JSON type: "a string", "an object".
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	}
	return t.String()
}

// article puts "a" or "an" before a JSON type word from encoding/json.
func article(v string) string {
	switch v {
	case "object", "array":
		return "an " + v
	case "":
		return "another type"
	}
	return "a " + v
}
