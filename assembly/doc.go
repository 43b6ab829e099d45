// Package assembly implements the Cloud Assembly container format: the .cloud
// ZIP archive, its manifest.json, and the limits that apply to both.
//
// Reading an assembly establishes no trust: use package signing to verify a
// signed assembly before loading any of its files.
package assembly
