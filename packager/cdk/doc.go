// Package cdk maps an AWS CDK cloud assembly (the cdk.out folder that
// `cdk synth` writes) onto Cloud Assembly droplets, and back.
//
// # Building
//
// Map reads a cdk.out folder: its manifest.json (schema "version" and
// "artifacts"), the asset manifests, the additional metadata files and the
// nested assemblies of CDK stages. The result ships the whole folder byte
// for byte under ArchiveDir, with a manifest of droplets that describe it:
//
//   - each aws:cloudformation:stack artifact is a stack droplet (stack name,
//     template, parameters, tags; the environment as CDK gives it, with
//     unknown-account and unknown-region kept; dependsOn from the
//     artifact's dependencies);
//   - each destination of each file asset is a file droplet, or a directory
//     droplet with objectKey for a folder CDK uploads as one zip; bucket
//     and key keep CDK's ${AWS::AccountId}-style placeholders (escaped as
//     \${ so they are not read as references);
//   - each destination of each Docker image asset is a docker-build droplet
//     (the build context, Dockerfile, build arguments, platform, repository
//     and tag): CDK builds images when it publishes them, so a cdk.out holds
//     no saved image;
//   - asset droplets are named "<asset manifest>/<display name>"
//     ("Service-assets/Handler/Code"), or by the asset's hash when CDK
//     gives no display name; IDs are made valid (other characters become
//     "-") and unique ("-2", "-3", ...);
//   - the stacks of a nested assembly (a CDK stage) get logical IDs
//     prefixed by the stage path ("Prod/ProdQueues890F56DA");
//   - aws:cdk:warning, aws:cdk:error and aws:cdk:info metadata, from the
//     manifest or an artifact's additionalMetadataFile, become droplet
//     metadata of kind warning, error and info;
//   - CDK's missing context becomes the manifest's missing section.
//
// Artifact and asset kinds it does not know stay in the folder as files and
// are reported as warnings. A partial copy of a cdk.out fails with
// ErrNotCopied naming every file and folder that is not there; a cdk.out
// whose droplets would not fit in a manifest.json (assembly.MaxDroplets,
// assembly.MaxManifestSize) fails with assembly.ErrTooLarge as soon as the
// mapping passes the bound. The executable files of asset folders are
// listed in their droplets' "executables" (a ZIP entry's mode is not
// signed; the manifest is).
//
// # Extracting
//
// OutFiles lists what `assemble extract --cdk-out` writes: every file under
// ArchiveDir, at its place in the original cdk.out, with the executable bit
// the signed manifest records for asset folders.
package cdk
