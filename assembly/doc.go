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
// # The check
//
// Check decides whether an assembly is valid, and every command asks it:
// build on what it writes, sign before signing, inspect, verify (on the
// verified bytes) and extract. It takes manifest.json's bytes and the
// archive's FileSet (Reader.Check reads both from an archive) and returns a
// Report of Findings: each has a Severity, a stable Rule code (see Rules),
// an Err matching the rule's sentinel (ErrMissingFile, ErrCycle, ...) and
// ErrManifest, and the same text wherever it is printed. Any finding of
// severity Error makes the error a *CheckError. What is an error and what a
// warning follows the spec: its MUSTs, and what makes the archive unsafe or
// not self-contained, are errors; what it leaves open when reading someone
// else's assembly (unknown keys, the droplet property tables it gives "for
// illustration purpose only", unknown protocols and kinds) are warnings,
// which CheckOptions.Strict makes errors. CheckOptions.Writing holds an
// assembly being built to the property tables and known keys.
//
// # Manifests
//
// ParseManifest reads manifest.json (one object, no duplicate keys, the
// schema cloud-assembly/1.0, the keys the spec requires); Manifest.Marshal
// prints it deterministically. Manifest.Validate runs the part of Check
// that needs no archive, for a manifest being built.
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
// time (SOURCE_DATE_EPOCH, else 1980-01-01 UTC), deflate as zip -6 does,
// compressed in parallel in 1 MiB chunks joined into one stream per entry,
// with memory independent of file sizes. WriteFile writes a temporary file
// and renames it into place only on success.
package assembly
