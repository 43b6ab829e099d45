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
// verified file (Assembly.WriteTo); package deploy takes it (deploy.Run).
// An unsigned assembly is refused unless OpenOptions.InsecureAllowUnsigned.
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
