// Package assembly implements the Cloud Assembly container format: the .cloud
// ZIP archive, its manifest.json, and the limits that apply to both.
//
// Reading an assembly establishes no trust: use package signing to verify a
// signed assembly before loading any of its files.
//
// # Reading
//
// NewReader and Open check the container from its raw bytes before any
// entry is inflated, and File.Open checks each entry's content as it streams
// (CRC-32, length, no bytes after the deflate stream: ErrCorrupt), so that
// every byte of an accepted archive is accounted for. Archives from stock
// tools are accepted: directory entries (zip -r) are structure, listed by
// Reader.Dirs and never among Reader.Files; a Unix mode without type bits
// (Python's zipfile) is a regular file. CheckName is the one file-name rule
// of reader and writer: names must extract to the same tree on Linux, macOS
// and Windows.
//
// # Manifests
//
// ParseManifest reads manifest.json strictly (one object, no duplicate keys,
// no unknown fields, schema cloud-assembly/1.0); Manifest.Marshal prints it
// deterministically. Manifest.Validate checks logical IDs, type specifiers,
// environments, metadata, missing entries, the properties and attributes of
// the known droplet kinds (package droplets) and the references in every
// property string, then builds the dependency graph and the deploy order.
// Errors match ErrManifest and a class: ErrLogicalID, ErrEnvironment,
// ErrReference, ErrCycle.
//
// # References
//
// A property string may hold ${LogicalId.attribute} tokens; `\\` writes a
// backslash and `\${` a literal "${". ParseString splits a string into
// literal text and references, FormatString prints it back.
//
// # Writing
//
// Writer builds byte-reproducible archives: entries sorted, mode 0644, one
// time (SOURCE_DATE_EPOCH, else 1980-01-01 UTC), deflate at DeflateLevel,
// compressed in parallel in 1 MiB chunks joined into one stream per entry,
// with memory independent of file sizes. WriteFile writes a temporary file
// and renames it into place only on success.
package assembly
