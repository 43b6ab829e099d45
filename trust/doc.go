// Package trust decides whom an assembly's reader trusts and opens an
// assembly only once it is verified: the one verify-and-open function
// that every command (verify, extract, deploy, status, push, pull) and Go
// programs call.
//
// Load reads what to trust (keyrings, a policy file, required signers,
// allowed algorithms); Open opens a file or a location (oci://, s3://,
// https://: OpenSource is the one place that tells them apart) and
// verifies it against that: the ZIP structure, every signature, every
// file's size and salted hash, then the one check of the manifest
// (assembly.Check). The Assembly it returns is the only way to the
// files' bytes (Assembly.Open, checked as they are read) and to the whole
// verified file (Assembly.WriteTo, as pull writes it); Assembly.Extract
// writes the files to a folder (or the cdk.out: ExtractOptions.Layout)
// whole or not at all; package deploy takes it (deploy.Run). An unsigned
// assembly is refused unless OpenOptions.InsecureAllowUnsigned.
//
// What the verification found is one value the commands print as they
// get it: Assembly.Verdict is `assemble verify --json`'s object, and a
// refusal (*VerifyError) carries the verdict of what was learnt, its
// signatures, policy and provenance verdicts; Extract returns `assemble
// extract --json`'s. OpenUnverified reads the structure of a file or
// location without verifying it, for commands that show what an
// assembly says of itself (inspect).
//
//	t, err := trust.Load(trust.Options{PolicyFile: "release-policy.yaml"})
//	...
//	a, err := trust.Open(ctx, "s3://releases/app/1.4.0.cloud", t, nil)
//	...
//	defer a.Close()
//	data, err := a.ReadFile("manifest.json")
//
// Verify and NewAssembly do the same for bytes the caller opened itself
// (any io.ReaderAt).
package trust
