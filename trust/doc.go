// Package trust decides whom an assembly's reader trusts and opens an
// assembly only once it is verified: the one verify-and-open function
// that every command (verify, extract, deploy, status, push, pull) and Go
// programs call.
//
// Load reads what to trust (keyrings, a --policy file, required signers,
// allowed algorithms); Verify checks an assembly read from any
// io.ReaderAt (a file, a remote object) against it: the ZIP structure,
// every signature, every file's size and salted hash, then the one check
// of the manifest (assembly.Check). Nothing in the assembly is used
// before Verify returns without an error.
//
//	t, err := trust.Load(trust.Options{Keyrings: []string{"release.pub.asc"}})
//	...
//	f, _ := os.Open("app.cloud")
//	st, _ := f.Stat()
//	res, err := trust.Verify(ctx, "app.cloud", f, st.Size(), t, trust.VerifyOptions{})
//	...
//	data, err := res.Verified.ReadFile("manifest.json")
package trust
