// Package artifacts packages the local artifacts of CloudFormation
// templates as aws cloudformation package does (aws-cli's
// artifact_exporter.py): Lambda code folders, API definitions, nested
// templates and the rest of Properties(), each added to a Set and named in
// the packaged template in the form aws-cli writes for it.
//
// # What a Set holds
//
// A Set collects the artifacts of one stack: folder zips (byte-reproducible:
// see ZipTime and ZipMode), files shipped as they are, and packaged nested
// templates, each an Asset whose object key is its content's SHA-256, equal
// contents once, and whose name (Asset.Use, see UseName) is what first uses
// it: "Fn-Code". The packager turns every Asset into a file droplet of the
// assembly by that name; assemble package writes them beside its output
// (Options.OutputDir, which no zip holds).
//
// # Adding an artifact from other code
//
// Code that meets a local path of its own (a directive such as rain's
// !Rain::S3) adds it with Set.Add (a file or folder; zip says whether a
// single file is zipped as Lambda needs) or Set.AddFile (one file), giving
// the folder the path is relative to and the place it is written, for
// errors; Set.AddJoined takes a path already joined to that folder and an
// object key extension, as rain's directives give them. The Ref returned gives the template values: Bucket, Key,
// BucketKeyMap(bucketProp, keyProp), S3URI and HTTPSURL, as yaml nodes in
// long form ({Ref: ...}, {Fn::Sub: ...}) or plain strings when the bucket
// is a name (assemble package). With Options.Parameter (assemble build) the
// values name the parameter BucketParameter; Export declares it in a
// template that uses it, and DeclareBucket declares it ahead of module
// expansion (which checks that every Ref names a parameter).
//
// Every error wraps one of the sentinels and, as *Error, carries the place
// the path is written. Nothing is written by this package.
package artifacts
