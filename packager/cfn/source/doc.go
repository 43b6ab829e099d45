// Package source finds and reads the files a template names: module
// Sources, Packages and Fn::InsertFile paths.
//
// A Resolver reads relative to where the naming file came from, described
// by a Location: a file of the project folder, an entry of a package zip,
// or an HTTPS URL.
//
//	r, _ := source.New("/project", nil)
//	top, _ := r.FileLocation("/project/template.yaml")
//	_ = r.AddPackage(top, "abc", "./package.zip", "")
//	b, loc, err := r.Resolve(ctx, top, "$abc/zip-module.yaml", "")
//	// a Source inside that module resolves from loc, inside the package
//
// # Sources
//
//   - A relative path is relative to the folder of the file that names it
//     (for a file inside a package: to its folder inside the package; for a
//     file fetched over HTTPS: to its URL). An absolute path is allowed only
//     inside the project folder.
//   - $alias/path/module.yaml reads path/module.yaml from the package
//     registered as alias with AddPackage. Aliases are global to the
//     Resolver: a module may use any alias the template or another module
//     declared. Packages are read when first used.
//   - https://... is fetched with a timeout and a size cap. Redirects must
//     stay on HTTPS.
//   - s3://bucket/key is read with aws-sdk-go-v2 and the standard AWS
//     settings: credentials from the environment, the shared files
//     (AWS_PROFILE), SSO, web identity or a container or instance role;
//     the region from AWS_REGION, AWS_DEFAULT_REGION or the profile
//     (us-east-1 when none is set); AWS_ENDPOINT_URL_S3, AWS_CA_BUNDLE.
//     Requests go through the same HTTP client as HTTPS sources (timeout,
//     at most 5 redirects, all on HTTPS) and count against the same size
//     limits. With no credentials the error is ErrNoCredentials.
//   - Other schemes, including http://, are refused (ErrUnsupportedScheme).
//
// A relative source inside a file fetched from a URL resolves against that
// URL: ./b.yaml in s3://bucket/m/a.yaml is s3://bucket/m/b.yaml.
//
// A hash "sha256:<64 hex digits>" pins the content of any source, local or
// remote; for a package it pins the zip. A mismatch is ErrHashMismatch.
//
// # Safety
//
// Local paths must stay inside the project folder, symbolic links included
// (ErrOutsideRoot); package paths must stay inside their package
// (ErrOutsidePackage). Package zips are read with the rules of our own
// archives (assembly.CheckName: no absolute names, no "." or ".." segments,
// no backslashes), no duplicate names, only regular files, a bounded number
// of entries, and each entry inflated up to MaxFileSize at most, whatever
// its header claims. Every error wraps one of this package's sentinels.
//
// # Testing S3
//
// The S3 tests run the real SDK against a real S3 API server that the test
// starts on localhost (internal/fakes3): github.com/johannesboyne/gofakes3
// with its in-memory backend, behind TLS. It was chosen because it is
// written in Go and fetched through the module proxy like any dependency
// (no Docker, Java or Python service, no network beyond localhost), it
// answers GetObject, HeadObject and the S3 errors (NoSuchKey, NoSuchBucket)
// the way the SDK expects, with path-style addressing on a custom endpoint
// (AWS_ENDPOINT_URL_S3), and it starts in milliseconds per test. A
// wrapping handler adds what it lacks: a slow object (the timeout),
// redirects off HTTPS and in a loop (the redirect rules), and a record of
// the access key and region each request was signed with (the credential
// chain and region settings).
package source
