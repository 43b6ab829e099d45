package main

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/deploy/review"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/internal/projectfs"
	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/packager/artifacts"
	"github.com/cloud-assembly/assemble/packager/blueprint"
	"github.com/cloud-assembly/assemble/packager/blueprint/subst"
	"github.com/cloud-assembly/assemble/packager/cdk"
	"github.com/cloud-assembly/assemble/packager/cfn"
	"github.com/cloud-assembly/assemble/packager/cfn/flatten"
	"github.com/cloud-assembly/assemble/packager/cfn/merge"
	"github.com/cloud-assembly/assemble/packager/cfn/paramschema"
	"github.com/cloud-assembly/assemble/packager/cfn/source"
	"github.com/cloud-assembly/assemble/packager/registry"
	"github.com/cloud-assembly/assemble/packager/schema"
	"github.com/cloud-assembly/assemble/remote"
	"github.com/cloud-assembly/assemble/signing"
	"github.com/cloud-assembly/assemble/trust"
)

// Errors of the command itself, for causes no library names.
var (
	// errIsFolder: a file argument names a folder.
	errIsFolder = errors.New("is a folder")
	// errNoMatch: inspect --query matches nothing.
	errNoMatch = errors.New("query matches nothing")
)

// An errorCode is the stable code --json prints for one cause of failure
// (the "code" of the error object; docs/json/error.json).
type errorCode struct {
	err  error
	code string
}

// errorCodes is the one table of causes and codes: every sentinel error of
// the libraries, most specific first (an error takes the code of the first
// entry it matches with errors.Is). The assembly check's causes take the
// rule codes of assembly.Rules, the blueprint's those of blueprint.Code;
// both written with "_" for "-". TestErrorCodesCoverSentinels fails when a
// library gains a sentinel this table does not list.
var errorCodes = []errorCode{
	// Remote locations: a transport's failure says what went wrong on
	// the way, whatever was being read.
	{digest.ErrMismatch, "changed_after_verification"},
	{digest.ErrMalformed, "bad_digest"},
	{trust.ErrWrongDigest, "wrong_digest"},
	{remote.ErrNoCredentials, "remote_no_credentials"},
	{remote.ErrLocation, "bad_location"},
	{remote.ErrNotFound, "remote_not_found"},
	{remote.ErrChanged, "remote_changed"},
	{remote.ErrBadResponse, "bad_response"},
	{remote.ErrDigestMismatch, "remote_digest_mismatch"},
	{remote.ErrRedirect, "redirect_refused"},
	{remote.ErrTimeout, "timeout"},
	{remote.ErrNotAssembly, "not_assembly_artifact"},
	{remote.ErrUnsupported, "remote_unsupported"},

	// Damaged data says more than the digest mismatch it causes.
	{assembly.ErrCorrupt, "corrupt"},
	{assembly.ErrTruncated, "truncated"},

	// Signing: an attestation to sign that is not this assembly's says
	// more than the file that differs.
	{signing.ErrAttestationMismatch, "attestation_mismatch"},
	// Signing: the signature policy (each wraps ErrPolicy).
	{signing.ErrThreshold, "too_few_signers"},
	{signing.ErrRequiredSigner, "required_signer_missing"},
	{signing.ErrAlgorithmNotAllowed, "algorithm_not_allowed"},
	{signing.ErrPolicy, "policy_not_met"},
	// Signing: verification (each wraps ErrVerification, listed last).
	{signing.ErrUnsigned, "unsigned"},
	{signing.ErrUnsignedContent, "unsigned_content"},
	{signing.ErrMalformedSignature, "malformed_signature"},
	{signing.ErrUnknownCritical, "unknown_critical"}, // before the two it also matches
	{signing.ErrBadSignature, "bad_signature"},
	{signing.ErrUnknownSigner, "unknown_signer"},
	{signing.ErrKeyExpired, "key_expired"},
	{signing.ErrSignatureExpired, "signature_expired"},
	{signing.ErrKeyNotYetValid, "key_not_yet_valid"},
	{signing.ErrKeyRevoked, "key_revoked"},
	{signing.ErrWeakSignatureHash, "weak_signature_hash"},
	{signing.ErrAttestation, "invalid_attestation"},
	{signing.ErrWeakAlgorithm, "weak_algorithm"},
	{signing.ErrNonce, "invalid_nonce"},
	{signing.ErrTimestamp, "timestamp_mismatch"},
	{signing.ErrUnlisted, "file_not_attested"},
	{signing.ErrMissing, "attested_file_missing"},
	{signing.ErrSizeMismatch, "size_mismatch"},
	{signing.ErrDigestMismatch, "digest_mismatch"},
	{signing.ErrVerification, "verification_failed"},
	// Signing: keys and the signing itself.
	{signing.ErrNoKey, "no_key"},
	{signing.ErrNoSigningKey, "no_signing_key"},
	{signing.ErrSignerExpired, "signer_expired"},
	{signing.ErrSignerRevoked, "signer_revoked"},
	{signing.ErrPassphraseNeeded, "passphrase_needed"},
	{signing.ErrWrongPassphrase, "wrong_passphrase"},
	{signing.ErrKeyFormat, "key_format"},
	{signing.ErrInputChanged, "input_changed"},
	{signing.ErrNotSigned, "not_signed"},
	{signing.ErrAlreadySigned, "already_signed"},
	{signing.ErrWouldDropSignatures, "would_drop_signatures"},
	{signing.ErrNoMatchingKey, "no_matching_key"},
	{signing.ErrAmbiguousKey, "ambiguous_key"},
	{signing.ErrGPGNotFound, "gpg_not_found"},
	{signing.ErrGPGUnknownKey, "gpg_unknown_key"},
	{signing.ErrGPGNoPinentry, "gpg_no_pinentry"},
	{signing.ErrGPG, "gpg_failed"},

	// Outputs.
	{output.ErrInput, "output_is_input"},
	{output.ErrFolder, "output_is_folder"},
	{output.ErrDangling, "dangling_link"},
	{output.ErrLocked, "output_locked"},
	{output.ErrNotEmpty, "folder_not_empty"},
	{output.ErrNotFolder, "not_a_folder"},
	{output.ErrDirect, "output_direct"},

	// Local artifacts of templates (issue 21).
	{artifacts.ErrOutsideProject, "artifact_outside_project"},
	{artifacts.ErrCycle, "nested_template_cycle"},
	{artifacts.ErrTooLarge, "artifact_too_large"},
	{artifacts.ErrChanged, "artifact_changed"},
	{artifacts.ErrBucketName, "bad_bucket_name"},
	{artifacts.ErrArtifact, "invalid_artifact"},

	// Modules and templates: a source's cause before the template's.
	{source.ErrBadSource, "bad_source"},
	{source.ErrNotFound, "source_not_found"},
	{source.ErrOutsideRoot, "source_outside_root"},
	{source.ErrOutsidePackage, "outside_package"},
	{source.ErrUnknownPackage, "unknown_package"},
	{source.ErrBadPackage, "bad_package"},
	{source.ErrTooLarge, "source_too_large"},
	{source.ErrBadHash, "bad_hash"},
	{source.ErrHashMismatch, "hash_mismatch"},
	{source.ErrNoCredentials, "no_credentials"},
	{source.ErrUnsupportedScheme, "unsupported_scheme"},
	{source.ErrFetch, "fetch_failed"},
	{merge.ErrArgs, "merge_argument"},
	{merge.ErrUnresolved, "merge_unresolved"},
	{merge.ErrTooLarge, "merge_too_large"},
	{flatten.ErrArgs, "flatten_argument"},
	{flatten.ErrUnresolved, "flatten_unresolved"},
	{flatten.ErrTooLarge, "flatten_too_large"},
	{paramschema.ErrSchema, "parameter_schema"},
	{paramschema.ErrViolation, "parameter_violation"},
	{paramschema.ErrTooLarge, "parameter_too_large"},
	{cfn.ErrSyntax, "template_syntax"},
	{cfn.ErrMissingParameter, "missing_module_parameter"},
	{cfn.ErrUnknownParameter, "unknown_module_parameter"},
	{cfn.ErrCycle, "module_cycle"},
	{cfn.ErrNameClash, "name_clash"},
	{cfn.ErrOutsideRoot, "outside_root"},
	{cfn.ErrTooLarge, "template_too_large"},
	{cfn.ErrDangling, "dangling_reference"},
	{cfn.ErrNoArtifacts, "no_asset_bucket"},
	{cfn.ErrInvalid, "invalid_template"},

	// Blueprints: blueprint.Code's names, with "blueprint_" before the
	// ones that would say nothing on their own.
	{blueprint.ErrSyntax, "blueprint_syntax"},
	{blueprint.ErrVersion, "blueprint_version"},
	{blueprint.ErrSchema, "blueprint_schema"},
	{blueprint.ErrSubstitution, "substitution_syntax"},
	{subst.ErrSyntax, "substitution_syntax"},
	{blueprint.ErrSubstitutionNotAllowed, "substitution_not_allowed"},
	{blueprint.ErrReference, "unresolved_reference"},
	{blueprint.ErrElemOutsideEach, "elem_outside_each"},
	{blueprint.ErrFunction, "blueprint_function"},
	{blueprint.ErrType, "type_mismatch"},
	{blueprint.ErrReferenceCycle, "reference_cycle"},
	{blueprint.ErrEachDependency, "each_dependency"},
	{blueprint.ErrEachType, "each_type"},
	{blueprint.ErrInclude, "blueprint_include"},
	{blueprint.ErrIncludeCycle, "include_cycle"},
	{blueprint.ErrIncludeDepth, "include_depth"},
	{blueprint.ErrEvalLimit, "eval_limit"},
	{blueprint.ErrRead, "blueprint_read"},
	{blueprint.ErrTooLarge, "blueprint_too_large"},

	// CDK cloud assemblies (cdk.out).
	{cdk.ErrNotSynthesized, "cdk_not_synthesized"},
	{cdk.ErrNotCopied, "cdk_file_missing"},
	{cdk.ErrOutside, "cdk_path_outside"},
	{cdk.ErrNoCDKOut, "no_cdk_out"},
	{cdk.ErrCloudAssembly, "invalid_cdk_out"},

	// Resource type schemas and registry modules.
	{schema.ErrCatalog, "schema_catalog"},
	{schema.ErrInvalid, "invalid_schema"},
	{schema.ErrTooLarge, "schema_too_large"},
	{schema.ErrRegexBudget, "schema_regex_time"},
	{registry.ErrInvalidFragment, "invalid_fragment"},
	{registry.ErrProject, "invalid_module_project"},
	{registry.ErrTypeName, "invalid_type_name"},

	// Projects (the project's generic class is last: the assembly
	// check's classes say more).
	{packager.ErrOutsideProject, "path_unsafe"}, // the rule path-unsafe, as build finds it
	{packager.ErrMissing, "missing"},
	{packager.ErrChanged, "project_changed"},
	{packager.ErrSchemaCheck, "schema_check"},
	// The project-path rule (internal/projectfs), where its error is not
	// already one of the classes above.
	{projectfs.ErrOutside, "outside_folder"},
	{projectfs.ErrNotRegular, "not_regular_file"},

	// The assembly check: assembly.Rules' codes. A *CheckError takes the
	// rule of its first finding instead.
	{assembly.ErrNoManifest, "manifest_missing"},
	{assembly.ErrSyntax, "manifest_json"},
	{assembly.ErrSchema, "schema"},
	{assembly.ErrUnknownKey, "unknown_key"},
	{assembly.ErrLogicalID, "logical_id"},
	{assembly.ErrEnvironment, "environment"},
	{assembly.ErrUnknownProtocol, "unknown_protocol"},
	{assembly.ErrUnknownKind, "unknown_kind"},
	{assembly.ErrReference, "reference"},
	{assembly.ErrTarget, "target"},
	{assembly.ErrCycle, "cycle"},
	{assembly.ErrMissingFile, "missing_file"},
	{assembly.ErrStackName, "stack_name"},
	{assembly.ErrDuplicateStack, "duplicate_stack"},
	{droplets.ErrSpecifier, "type_specifier"},
	{droplets.ErrUnknownProperty, "unknown_property"},
	{droplets.ErrAttribute, "unknown_attribute"},
	{droplets.ErrProperty, "property"},
	{assembly.ErrManifest, "manifest"},
	{assembly.ErrFormat, "container"},
	{assembly.ErrInsecurePath, "unsafe_name"},
	{assembly.ErrDuplicate, "duplicate_name"},
	{assembly.ErrTooLarge, "too_large"},
	{packager.ErrProject, "invalid_project"},

	// Deploy (a droplet's failure before the dependents it stops).
	{deploy.ErrInterrupted, "interrupted"},
	{deploy.ErrPairNotStarted, "pair_not_started"},
	{deploy.ErrAccount, "wrong_account"},
	{deploy.ErrTarget, "bad_target"},
	{trust.ErrTargetRefused, "target_refused"},
	{deploy.ErrMissing, "missing_information"},
	{deploy.ErrParameter, "bad_parameter"},
	{deploy.ErrUndeployable, "undeployable"},
	{deploy.ErrEnvironment, "unsupported_environment"},
	{deploy.ErrMetadataError, "error_metadata"},
	{deploy.ErrNoDocker, "no_docker"},
	{deploy.ErrStagingBucket, "no_staging_bucket"},
	{deploy.ErrOnly, "no_such_droplet"},
	{deploy.ErrUnresolved, "unresolved"},
	{deploy.ErrStackFailed, "stack_failed"},
	{deploy.ErrUpload, "upload_failed"},
	{deploy.ErrPush, "push_failed"},
	{deploy.ErrDependency, "dependency_failed"},
	{deploy.ErrForeignStack, "foreign_stack"},
	{deploy.ErrBucket, "bucket_unusable"},
	{deploy.ErrAWS, "aws_failed"},
	{deploy.ErrDiffers, "differs"},
	// errcode sentinels (their codes; listed until codeOf reads errcode.Of).
	{deploy.ErrApprovalRequired, "approval_required"},
	{deploy.ErrNotApproved, "not_approved"},
	{deploy.ErrAccountChanged, "account_changed"},
	{deploy.ErrApprovalLevel, "bad_approval_level"},
	{review.ErrTemplate, "review_template"},
	{review.ErrTooManyGrants, "review_too_many_grants"},

	// The command's own.
	{errIsFolder, "is_folder"},
	{errNoMatch, "no_match"},
	{trust.ErrInvalidPolicy, "invalid_policy"},
	{trust.ErrKeyringFile, "keyring_file"},
	{trust.ErrNoKeyring, "no_keyring"},
	{trust.ErrOption, "trust_option"},
}

// Codes of failures no sentinel above names.
const (
	codeUsage       = "usage"             // bad flags or arguments (exit code 2)
	codeNotFound    = "not_found"         // a file named does not exist
	codePermission  = "permission_denied" // a file may not be read or written
	codeInterrupted = "interrupted"       // the command was interrupted
	codeFailure     = "failure"           // anything else (an I/O error)
)

// codeOf is err's stable code: "usage" for a usage error, the rule of an
// invalid assembly's first finding (or of the first finding a build
// places in its project), the code of a blueprint's first
// error, else the first errorCodes entry err matches, else a code for
// the file system's classes of errors.
func codeOf(err error) string {
	var ue usageError
	if errors.As(err, &ue) {
		return codeUsage
	}
	var ce *assembly.CheckError
	if errors.As(err, &ce) && len(ce.Findings) > 0 {
		return ruleCode(ce.Findings[0].Rule)
	}
	var f assembly.Finding // the build places findings in the project
	if errors.As(err, &f) && f.Rule != "" {
		return ruleCode(f.Rule)
	}
	var bl blueprint.ErrorList
	if errors.As(err, &bl) && len(bl) > 0 {
		err = bl[0]
	}
	for _, c := range errorCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return codeNotFound
	case errors.Is(err, fs.ErrPermission):
		return codePermission
	case errors.Is(err, context.Canceled):
		return codeInterrupted
	}
	return codeFailure
}

// ruleCode is an assembly rule's code as an error code: "missing-file"
// becomes "missing_file".
func ruleCode(rule string) string { return strings.ReplaceAll(rule, "-", "_") }
