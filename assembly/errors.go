package assembly

import "errors"

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, so callers can test the class with errors.Is.
var (
	// ErrFormat: the archive is not a well-formed Cloud Assembly container
	// (bad ZIP structure, unsupported method, encryption, ...).
	ErrFormat = errors.New("assembly: not a valid cloud assembly")
	// ErrInsecurePath: an entry name is unsafe (absolute, "..", backslash, ...).
	ErrInsecurePath = errors.New("assembly: insecure file name")
	// ErrDuplicate: two entries share a name, or collide after Unicode NFC
	// normalization plus case folding.
	ErrDuplicate = errors.New("assembly: duplicate file name")
	// ErrCorrupt: an entry's data does not match its headers: its CRC-32 or
	// length differs, or its deflate stream is corrupt or ends before the
	// declared compressed size. Found while the content streams (File.Open).
	ErrCorrupt = errors.New("assembly: corrupt file data")
	// ErrTooLarge: a limit (see the Max constants) is exceeded.
	ErrTooLarge = errors.New("assembly: limit exceeded")
	// ErrManifest: manifest.json is missing or invalid.
	ErrManifest = errors.New("assembly: invalid manifest")
)

// Classes of invalid manifests. Each error of these classes also matches
// ErrManifest.
var (
	// ErrLogicalID: a droplet's logical ID breaks the spec's rules.
	ErrLogicalID = errors.New("assembly: bad logical id")
	// ErrEnvironment: an environment string is malformed.
	ErrEnvironment = errors.New("assembly: bad environment")
	// ErrReference: a ${LogicalId.attribute} token is malformed, names a
	// droplet that does not exist, or an attribute its kind does not output.
	ErrReference = errors.New("assembly: bad reference")
	// ErrCycle: the droplets' dependencies form a cycle.
	ErrCycle = errors.New("assembly: dependency cycle")
)
