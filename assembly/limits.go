package assembly

// Limits shared by reading (Open, NewReader) and verification (package
// signing). Hostile archives are bounded by them before anything is inflated.
const (
	// MaxFiles is the largest number of entries an assembly may hold.
	MaxFiles = 1 << 17
	// MaxNameLength is the longest entry name, in bytes.
	MaxNameLength = 1024
	// MaxNameBytes bounds the entry names of one archive together, in
	// bytes (an average of 128 at MaxFiles), so that reading the directory
	// of an unauthenticated archive takes bounded memory.
	MaxNameBytes = 16 << 20
	// MaxDirectorySize bounds the ZIP central directory, in bytes.
	MaxDirectorySize = 32 << 20
	// MaxManifestSize is the largest manifest.json, in bytes.
	MaxManifestSize = 32 << 20
	// MaxSignatureSize is the largest signature.asc, in bytes.
	MaxSignatureSize = 16 << 20
	// MaxFileSize is the largest uncompressed size of any one entry.
	MaxFileSize = 1 << 36
	// MaxTotalSize is the largest sum of uncompressed entry sizes.
	MaxTotalSize = 1 << 38
)

// Reserved entry names at the root of the archive.
const (
	ManifestName  = "manifest.json"
	SignatureName = "signature.asc"
)

// Manifest limits.
const (
	// MaxDroplets is the largest number of droplets a manifest may hold.
	MaxDroplets = 1 << 16
	// MaxManifestDepth is the deepest nesting of JSON values in manifest.json.
	MaxManifestDepth = 256
)
