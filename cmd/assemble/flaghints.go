package main

import (
	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/packager/artifacts"
	"github.com/cloud-assembly/assemble/packager/cfn"
	"github.com/cloud-assembly/assemble/packager/schema"
	"github.com/cloud-assembly/assemble/provenance"
	"github.com/cloud-assembly/assemble/remote"
)

// flagHints are the hints of the causes whose fix is one of this
// command's flags. A library says what is wrong in its own terms (the
// option's field, the file, the rule) and never names a flag
// (TestNoLibraryMessageNamesAFlag); where the user's fix is a flag, the
// command's hint for the sentinel's code names it, in place of the
// library's. One hint per code still: codeHint prints this one.
var flagHints = map[error]string{
	assembly.ErrManifest:        "the assembly is invalid: every command refuses it (see FINDINGS in 'assemble verify --help'); fix it and build it again",
	assembly.ErrUnknownKey:      "remove the key the spec does not define (FINDINGS in 'assemble verify --help' lists the rules), then build again",
	remote.ErrDigestMismatch:    "the bytes that arrived are not the ones asked for: the server or the --digest is wrong; do not use them",
	schema.ErrCatalog:           "--schemas names a folder of resource type schemas (JSON files)",
	artifacts.ErrOutsideProject: "keep local artifacts (Lambda code, nested templates) inside the project folder: assemble package --root DIR names a folder that holds the template and its artifacts; assemble build reads the folder of assembly.yaml, so put one in a folder that holds both",
	cfn.ErrNoArtifacts:          "give a bucket for local artifacts: --asset-bucket NAME, or assets: {bucketName: NAME} in assembly.yaml",
	provenance.ErrBundle:        "give the Sigstore bundle (v0.3, a DSSE envelope of an in-toto statement) that 'assemble attest --provenance' or cosign wrote",
}
