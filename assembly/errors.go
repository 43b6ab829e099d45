package assembly

import "errors"

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, so callers can test the class with errors.Is.
var (
	// ErrFormat: the archive is not a well-formed Cloud Assembly container
	// (bad ZIP structure, unsupported method, encryption, ...).
	ErrFormat = errors.New("not a valid cloud assembly")
	// ErrInsecurePath: an entry name, or a path property of a droplet, is
	// unsafe (absolute, "..", backslash, ...).
	ErrInsecurePath = errors.New("insecure file name")
	// ErrDuplicate: two entries share a name, or collide after Unicode NFC
	// normalization plus case folding.
	ErrDuplicate = errors.New("duplicate file name")
	// ErrCorrupt: an entry's data does not match its headers: its CRC-32 or
	// length differs, or its deflate stream is corrupt or ends before the
	// declared compressed size. Found while the content streams (File.Open).
	ErrCorrupt = errors.New("corrupt file data")
	// ErrTooLarge: a limit (see the Max constants) is exceeded.
	ErrTooLarge = errors.New("limit exceeded")
	// ErrManifest: manifest.json is missing or invalid, or names what the
	// archive does not hold. Every finding of Check matches it.
	ErrManifest = errors.New("invalid manifest")
)

// ErrTruncated: the file starts as a zip archive but ends before its end
// record: a download or copy cut short. It matches ErrFormat too.
var ErrTruncated error = &formatError{"truncated archive"}

// formatError is a sentinel of one kind of ErrFormat.
type formatError struct{ msg string }

func (e *formatError) Error() string { return e.msg }
func (e *formatError) Unwrap() error { return ErrFormat }

// classError is a sentinel of one class of invalid manifests: it matches
// ErrManifest too.
type classError struct{ msg string }

func (e *classError) Error() string { return e.msg }
func (e *classError) Unwrap() error { return ErrManifest }

// Classes of invalid manifests, one per kind of finding (see Rules). Each
// also matches ErrManifest.
var (
	// ErrNoManifest: the archive holds no manifest.json.
	ErrNoManifest error = &classError{"no manifest.json"}
	// ErrSyntax: manifest.json is not one JSON object (bad JSON, invalid
	// UTF-8, a duplicate key, data after the object, nesting too deep).
	ErrSyntax error = &classError{"manifest.json is not valid JSON"}
	// ErrSchema: a key the spec requires is missing, a value has the wrong
	// JSON type, or the schema is not cloud-assembly/1.0.
	ErrSchema error = &classError{"manifest does not follow the schema"}
	// ErrUnknownKey: a key the spec does not define (a warning when
	// reading someone else's assembly).
	ErrUnknownKey error = &classError{"unknown key"}
	// ErrLogicalID: a droplet's logical ID breaks the spec's rules.
	ErrLogicalID error = &classError{"bad logical id"}
	// ErrEnvironment: an environment string is malformed.
	ErrEnvironment error = &classError{"bad environment"}
	// ErrUnknownProtocol: a type specifier or environment uses a protocol
	// this package does not know (a warning when reading).
	ErrUnknownProtocol error = &classError{"unknown protocol"}
	// ErrUnknownKind: a type specifier names a droplet kind this package
	// does not know (a warning when reading).
	ErrUnknownKind error = &classError{"unknown droplet kind"}
	// ErrReference: a ${LogicalId.attribute} token is malformed, names a
	// droplet that does not exist, or an attribute its kind does not output.
	ErrReference error = &classError{"bad reference"}
	// ErrCycle: the droplets' dependencies form a cycle.
	ErrCycle error = &classError{"dependency cycle"}
	// ErrMissingFile: a path property names a file or folder the archive
	// does not hold: the assembly is not self-contained.
	ErrMissingFile error = &classError{"file not in the archive"}
	// ErrStackName: a stack droplet's stackName is one CloudFormation
	// refuses.
	ErrStackName error = &classError{"bad stack name"}
	// ErrDuplicateStack: two stack droplets name one stack in one
	// environment.
	ErrDuplicateStack error = &classError{"duplicate stack name"}
)
