package main

import (
	"errors"
	"fmt"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/deploy/review"
	"github.com/cloud-assembly/assemble/internal/output"
)

// overridingHints say more than any hint a command attaches to an error
// of their class: a truncated file is not an assembly to rebuild.
var overridingHints = []struct {
	err  error
	hint string
}{
	{assembly.ErrTruncated, "the file was cut short (an interrupted download or copy): download or copy it again"},
}

// hintOf is the hint report prints for err: an overriding hint of its
// class, else the one a command attached (withHint), else the hint of its
// code (codeHints).
func hintOf(err error, attached string) string {
	for _, h := range overridingHints {
		if errors.Is(err, h.err) {
			return h.hint
		}
	}
	if attached != "" {
		return attached
	}
	var nf *output.NoFolderError
	if errors.As(err, &nf) {
		return fmt.Sprintf("create the folder first (mkdir -p %s), or name another output with -o", nf.Dir)
	}
	return codeHints[codeOf(err)]
}

// codeHints is the hint of each error code (errcodes.go), for errors no
// command attached a hint to: the README promises a hint line with every
// error, and TestEveryCodeHasAHint holds us to it.
var codeHints = map[string]string{
	codeUsage:       "run 'assemble --help' for usage",
	codeNotFound:    "check the path: the file or folder it names does not exist",
	codePermission:  "check the file's permissions, or name a file you may read (or a folder you may write)",
	codeInterrupted: "",
	codeFailure:     "",

	// Remote locations.
	"changed_after_verification": "something changed the bytes after they were verified (the file was written to): verify it again, from a copy nobody writes to",
	"bad_digest":                 "a digest is sha256: followed by 64 lowercase hex digits, as build, sign, verify and push print it",
	"wrong_digest":               "the file's SHA-256 is not the --digest given: check which assembly you mean ('assemble verify' prints its sha256)",
	"remote_no_credentials":      "S3 credentials come from the AWS default chain: AWS_PROFILE, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, SSO, a web identity or an instance role",
	"bad_location":               "locations look like oci://REGISTRY/REPOSITORY:TAG (or @sha256:DIGEST), s3://BUCKET/KEY[?versionId=V], https://HOST/PATH; a file whose name starts so is ./NAME",
	"remote_not_found":           "check the location; 'assemble push ASSEMBLY LOCATION' puts an assembly there",
	"remote_changed":             "the object was replaced while it was read: read it again, or name one version (oci://...@sha256:DIGEST, s3://...?versionId=V)",
	"bad_response":               "the server does not answer byte ranges as HTTP asks (RFC 9110); read the file from a server that does",
	"remote_digest_mismatch":     "the bytes that arrived are not the ones asked for: the server or the --digest is wrong; do not use them",
	"redirect_refused":           "the server redirected to another scheme, which is refused; use the final https:// location",
	"timeout":                    "the server is slow or unreachable; try again",
	"not_assembly_artifact":      "the manifest is not a Cloud Assembly artifact (docs/oci.md); push one with 'assemble push'",
	"remote_unsupported":         "push to oci://REGISTRY/REPOSITORY:TAG or s3://BUCKET/KEY",
	"output_direct":              "write to a file with -o FILE: standard output and pipes are written in order only",

	// Damaged or foreign archives.
	"corrupt":   "the archive is damaged (its data does not match its own ZIP headers); rebuild it and sign it again",
	"truncated": "the file was cut short (an interrupted download or copy): download or copy it again",

	// Signatures and the policy.
	"attestation_mismatch":    "the attestation was made for another assembly, or before it changed: run 'assemble attest' on this file and sign that",
	"too_few_signers":         "more trusted keys must sign: each co-signer runs 'assemble sign --add' (with --key, --gpg or --signature)",
	"required_signer_missing": "the required signer must add a signature: 'assemble sign --add' with their key",
	"algorithm_not_allowed":   "sign again with an allowed algorithm (assemble sign --algorithm)",
	"policy_not_met":          "the signatures do not meet the policy: see the signature lines above, and have the missing signers sign with 'assemble sign --add'",
	"unsigned":                "sign it with 'assemble sign', or pass --allow-unsigned to check it without authenticating it",
	"unsigned_content":        "signature.asc must hold exactly one cleartext-signed message; sign again with 'assemble sign'",
	"malformed_signature":     "signature.asc must hold exactly one cleartext-signed message; sign again with 'assemble sign'",
	"bad_signature":           "the archive changed after it was signed; rebuild it and sign it again",
	"unknown_signer":          "if you trust the signer, add their public key with --keyring FILE",
	"key_expired":             "the signer must sign again with a valid key",
	"signature_expired":       "the signer made the signature valid only until then: they must sign again",
	"key_not_yet_valid":       "the signature is dated before the key existed: check the signer's clock, and sign again",
	"key_revoked":             "the signer must sign again with a valid key",
	"weak_signature_hash":     "sign again with 'assemble sign' (SHA256 or stronger)",
	"invalid_attestation":     "signature.asc does not hold a valid attestation: sign the assembly again with 'assemble sign'",
	"weak_algorithm":          "sign again with 'assemble sign' (SHA256 or stronger)",
	"invalid_nonce":           "sign the assembly again with 'assemble sign' (it makes a fresh nonce of the right size)",
	"timestamp_mismatch":      "sign within 5 minutes of making the attestation ('assemble attest', then sign at once), and check the signer's clock",
	"file_not_attested":       "the archive changed after it was signed; rebuild it and sign it again",
	"attested_file_missing":   "the archive changed after it was signed; rebuild it and sign it again",
	"size_mismatch":           "the archive changed after it was signed; rebuild it and sign it again",
	"digest_mismatch":         "the archive changed after it was signed; rebuild it and sign it again",
	"verification_failed":     "the assembly cannot be trusted as it is; rebuild it and sign it again",

	// Keys and signing.
	"no_key":            "name a secret key with --key FILE (or $ASSEMBLE_SIGNING_KEY), or sign with --gpg or --signature",
	"no_signing_key":    "--key takes a secret key (gpg --export-secret-keys --armor KEYID > key.asc); a public key belongs in verify --keyring",
	"signer_expired":    "extend the key's expiry (gpg --quick-set-expire) or sign with another key",
	"signer_revoked":    "sign with a key that is not revoked",
	"passphrase_needed": "give the passphrase with --passphrase-file FILE or $ASSEMBLE_PASSPHRASE (or run at a terminal to be asked)",
	"wrong_passphrase":  "check the passphrase file (a trailing newline is ignored) or $ASSEMBLE_PASSPHRASE",
	"key_format":        "give an OpenPGP key, armored or binary (gpg --export --armor KEYID, or --export-secret-keys for a signing key)",
	"input_changed":     "something wrote the assembly while it was being signed: sign it again once nothing else writes it",
	"not_signed":        "--add co-signs a signed assembly: sign it first without --add",
	"already_signed":    "this key signed already; a co-signature must come from another key",
	"no_matching_key":   "check --local-user: a fingerprint, key ID or part of a user ID of a key in the file",
	"ambiguous_key":     "name the key exactly with --local-user (its fingerprint)",
	"gpg_not_found":     "install GnuPG, or name it with $ASSEMBLE_GPG",
	"gpg_unknown_key":   "check --local-user against 'gpg --list-secret-keys', or import the key into GNUPGHOME",
	"gpg_no_pinentry":   "run at a terminal (with GPG_TTY=$(tty)) or preset the passphrase with gpg-preset-passphrase",
	"gpg_failed":        "run the same gpg command by hand to see why it fails (GNUPGHOME is honoured)",

	// Outputs.
	"output_is_input":  "name another output file with -o: this one is read by the command",
	"output_is_folder": "name a file with -o, not a folder",
	"dangling_link":    "create the file the link points to, or remove the link",
	"output_locked":    "another assemble writes this file now: wait for it, or write elsewhere",
	"folder_not_empty": "name an empty folder (or one that does not exist yet)",
	"not_a_folder":     "name a folder, not a file",

	// Module sources.
	"bad_source":          "a module Source is a path relative to the file that names it, an https:// URL or s3://bucket/key",
	"source_not_found":    "check the module's Source (a path relative to the file that names it), or add the file",
	"source_outside_root": "keep module sources inside the project folder (or fetch them by https:// or s3:// with a Hash)",
	"outside_package":     "a path in a package may not leave the package",
	"unknown_package":     "declare the alias under Packages before writing $alias/path",
	"bad_package":         "a package is a zip archive of modules: check its file or URL",
	"source_too_large":    "the module source is larger than assemble reads; split it",
	"bad_hash":            "write the hash as Hash: sha256:<64 hex digits>",
	"hash_mismatch":       "the source changed since it was pinned: check it, then update Hash (sha256sum prints it)",
	"no_credentials":      "set AWS credentials (AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) and AWS_REGION",
	"unsupported_scheme":  "use a relative path, https:// or s3://",
	"fetch_failed":        "check the URL and the network (and credentials for s3://), then try again",

	// Templates and modules.
	"merge_argument":           "Fn::Merge takes a list of objects",
	"merge_unresolved":         "Fn::Merge's arguments must be known when packaging (no Ref to a resource)",
	"merge_too_large":          "the merged object is too large; merge less",
	"flatten_argument":         "Fn::Flatten takes a list (of lists)",
	"flatten_unresolved":       "Fn::Flatten's source must be known when packaging (no Ref to a resource)",
	"flatten_too_large":        "the flattened list is too large; flatten less",
	"parameter_schema":         "fix the module's ParameterSchema at the place shown (it is a JSON Schema)",
	"parameter_violation":      "give the module a property value its ParameterSchema allows",
	"parameter_too_large":      "the value is too large for the ParameterSchema check",
	"template_syntax":          "fix the YAML or JSON at the line and column shown",
	"missing_module_parameter": "give the module the parameter under Properties, or a Default in the module",
	"module_cycle":             "a module includes itself through the chain shown: break the cycle",
	"name_clash":               "rename one of the two: a module's resources are prefixed with its name",
	"outside_root":             "keep the file inside the project folder",
	"template_too_large":       "the template is larger than assemble reads (see the README's limits); split it into modules or nested stacks",
	"dangling_reference":       "name something the template defines (the error names the nearest)",
	"invalid_template":         "fix the template at the place shown",
	"no_asset_bucket":          "give a bucket for local artifacts: --asset-bucket NAME, or assets: {bucketName: NAME} in assembly.yaml",

	// Blueprints.
	"blueprint_syntax":         "fix the YAML or JSON at the line and column shown",
	"blueprint_version":        "set version: 2023-04-20",
	"blueprint_schema":         "fix the blueprint at the place shown (see the Blueprint Specification v2023-04-20)",
	"substitution_syntax":      "fix the ${...} substitution at the place shown (write $${ for a literal ${)",
	"substitution_not_allowed": "a substitution may not stand there: write the value",
	"unresolved_reference":     "name a variable, value, resource, data source, child or export the blueprint defines",
	"elem_outside_each":        "elem and i may be used only in a resource with each",
	"blueprint_function":       "fix the function call at the place shown (its name, its arguments)",
	"type_mismatch":            "give a value of the type the field declares",
	"reference_cycle":          "the references shown form a cycle: break it",
	"each_dependency":          "each may use only variables and values known before deploying",
	"each_type":                "each must yield an array",
	"blueprint_include":        "fix the include's path (relative to the blueprint; ${cwd()} for the project folder)",
	"include_cycle":            "the includes shown form a cycle: break it",
	"include_depth":            "include fewer levels of blueprints",
	"eval_limit":               "the blueprint evaluates to too much; simplify it",
	"blueprint_read":           "check the blueprint's path and permissions",
	"blueprint_too_large":      "the blueprint is larger than assemble reads; split it into includes",

	// CDK.
	"cdk_not_synthesized": "run 'cdk synth' first, then build the cdk.out it writes",
	"cdk_file_missing":    "synthesize again ('cdk synth'): the cdk.out is incomplete",
	"cdk_path_outside":    "keep assets inside cdk.out (leave asset staging on)",
	"no_cdk_out":          "--cdk-out extracts an assembly built from a cdk.out; use -d DIR for this one",
	"invalid_cdk_out":     "synthesize again with a CDK version assemble reads ('cdk synth')",

	// Resource schemas and registry modules.
	"schema_catalog":         "--schemas names a folder of resource type schemas (JSON files)",
	"invalid_schema":         "fix the schema at the place shown",
	"schema_too_large":       "the schema is larger than assemble reads",
	"invalid_fragment":       "fix the module fragment at the place shown",
	"invalid_module_project": "a module project holds .rpdk-config and fragments/",
	"invalid_type_name":      "a module type name is Organization::Service::Name::MODULE",

	// Projects.
	"path_unsafe":     "name a path inside the project folder (relative, no ..)",
	"missing":         "give the value (properties.parameters in assembly.yaml, or a Default), or build without --strict: the assembly then lists it under missing for the deployer",
	"project_changed": "a file changed while the project was built: build again once nothing else writes it",
	"schema_check":    "fix the template where the schema check says, or pass --schemas-warn to make these warnings",
	"invalid_project": "fix assembly.yaml at the line and column shown (its YAML, or the key named; see Projects in the README)",

	// The assembly check.
	"manifest_missing":    checkFailedHint,
	"manifest_json":       checkFailedHint,
	"schema":              checkFailedHint,
	"schema_version":      checkFailedHint,
	"unknown_key":         checkFailedHint,
	"logical_id":          checkFailedHint,
	"environment":         checkFailedHint,
	"unknown_protocol":    checkFailedHint,
	"unknown_kind":        checkFailedHint,
	"reference":           checkFailedHint,
	"reference_syntax":    checkFailedHint,
	"reference_droplet":   checkFailedHint,
	"reference_attribute": checkFailedHint,
	"cycle":               checkFailedHint,
	"target":              "give each target environments (aws://ACCOUNT/REGION) and every value its droplets take as ${target.NAME}",
	"stack_name":          "name the stack with a letter, then letters, digits and hyphens (at most 128 characters): CloudFormation refuses any other name",
	"duplicate_stack":     "give each stack droplet its own stackName, or put them in other accounts or regions: one stack holds one droplet",
	"missing_file":        "add the file to the project folder, or correct the path (relative to the project folder)",
	"type_specifier":      checkFailedHint,
	"unknown_property":    checkFailedHint,
	"unknown_attribute":   checkFailedHint,
	"property":            checkFailedHint,
	"property_missing":    checkFailedHint,
	"property_type":       checkFailedHint,
	"manifest":            checkFailedHint,
	"container":           "the file is not a valid Cloud Assembly; rebuild it with 'assemble build'",
	"unsafe_name":         "the file is not a valid Cloud Assembly; rebuild it with 'assemble build'",
	"duplicate_name":      "the file is not a valid Cloud Assembly; rebuild it with 'assemble build'",
	"too_large":           "the assembly exceeds a limit (see the README); split it",

	// Merged later: signing, modules, schemas, project files.
	"unknown_critical":         "the signer's key or signature carries a critical OpenPGP subpacket this tool does not know: sign again with a key without it",
	"would_drop_signatures":    "co-sign with --add, or pass --replace to drop the existing signatures",
	"unknown_module_parameter": "set only the parameters the module declares (the error names the nearest), or declare the parameter in the module",
	"schema_regex_time":        "a pattern in the schema takes too long to match: simplify it",
	"outside_folder":           "keep the file inside the project folder (a link may not lead out of it)",
	"not_regular_file":         "name a regular file (not a FIFO, socket or device)",

	// Local artifacts of templates.
	"artifact_outside_project": "keep local artifacts (Lambda code, nested templates) inside the project folder: assemble package --root DIR names a folder that holds the template and its artifacts; assemble build reads the folder of assembly.yaml, so put one in a folder that holds both",
	"nested_template_cycle":    "a nested stack includes itself through the chain shown: break the cycle",
	"artifact_too_large":       "the artifact is larger than assemble packages; upload it yourself and name it by its s3:// URL",
	"artifact_changed":         "a file changed while it was packaged: build again once nothing else writes it",
	"bad_bucket_name":          "name the bucket as S3 does: 3 to 63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit",
	"invalid_artifact":         "fix the artifact's path or value at the place shown (a file or folder of the project, or an s3:// URL)",

	// Deploy.
	"wrong_account":           "use credentials of the droplet's account, or name a role that reaches it: the target's deployRole, --role-arn, or a CDK-bootstrapped account (--qualifier)",
	"bad_target":              "choose one of the assembly's targets with --target NAME ('assemble inspect' lists them)",
	"target_refused":          "choose a target the policy file's targets: list names, or change the policy",
	"pair_not_started":        "fix the failed account/region pairs and deploy again, or allow more failures with --max-failures N",
	"missing_information":     "supply the value the assembly lists under missing (deploy --parameter DROPLET.NAME=VALUE)",
	"bad_parameter":           "write --parameter as DROPLET.NAME=VALUE, naming a parameter the template declares and the assembly lists under missing (or the policy file names under deployer-parameters)",
	"undeployable":            "this tool has no deployer for the droplet's type: deploy it another way, or leave it out with --only",
	"unsupported_environment": "deploy droplets whose environment is aws://ACCOUNT/REGION",
	"error_metadata":          "the droplet carries an error from its build: fix the source and build again",
	"no_docker":               "start a Docker engine (or set DOCKER_HOST) to build and push images",
	"no_staging_bucket":       "give --staging-bucket NAME (or staging-bucket in the policy file) for templates over 51,200 bytes",
	"no_such_droplet":         "name droplets the assembly holds ('assemble inspect' lists them)",
	"unresolved":              "the reference names an attribute no deployed droplet gave: deploy the droplet it names first",
	"stack_failed":            "see the stack's events in CloudFormation for the cause, fix it, and deploy again",
	"upload_failed":           "check the bucket, the credentials and the network, then deploy again",
	"push_failed":             "check the repository, the credentials and the network, then deploy again",
	"dependency_failed":       "deploy again once the droplet it depends on deploys",
	"foreign_stack":           "if the stack is to be this droplet's from now on, deploy with --adopt ID (the droplet's logical ID); else give the droplet another stackName",
	"bucket_unusable":         "create the bucket in the droplet's account and region, or name one these credentials may write to",
	"aws_failed":              "check the credentials, the region and the network (AWS_PROFILE, AWS_REGION), then try again",
	"differs":                 "what runs is not what was signed: deploy the assembly again, or find who changed it",
	"approval_required":       deploy.ErrApprovalRequired.Hint(),
	"not_approved":            deploy.ErrNotApproved.Hint(),
	"account_changed":         deploy.ErrAccountChanged.Hint(),
	"bad_approval_level":      deploy.ErrApprovalLevel.Hint(),
	"review_template":         review.ErrTemplate.Hint(),
	"review_too_many_grants":  review.ErrTooManyGrants.Hint(),

	// The command's own, and trust.
	"is_folder":      "name a file, not a folder",
	"no_match":       "check the --query path (gjson syntax) against 'assemble inspect --json'",
	"invalid_policy": "fix the policy file at the line and column shown (keys: keyrings, min-signers, require-signers, algorithms)",
	"keyring_file":   "give --keyring an armored or binary OpenPGP public keyring (gpg --export --armor KEYID > keyring.asc)",
	"no_keyring":     "name the trusted public keys with --keyring FILE (gpg --export --armor KEYID > keyring.asc), or a --policy file",
	"trust_option":   "check the trust options (--min-signers, --require-signer, --allow-algorithm)",
}
