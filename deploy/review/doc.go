// Package review says what a change to a CloudFormation stack will do,
// before it is made: a property-level diff of two templates (Diff) and the
// security changes among them (Broadening).
//
// It is pure: it reads two parsed templates (Parse reads JSON or YAML with
// CloudFormation's short-form tags) and calls nothing, so deploy, the
// CLI and any Go program reach one verdict.
//
// # The broadening rule
//
// Every security-relevant thing a template grants is reduced to grants:
// one (scope, principal, action, resource, condition) per combination an
// IAM-style policy statement with Effect Allow names, wherever a policy
// document sits (any property value that holds a Statement: inline,
// managed, trust and resource policies, KMS key policies, on any resource
// type), plus managed policy attachments, Lambda permissions and
// security group rules (one grant per peer and port range). A grant of the
// new template is broadening when no grant of the deployed one in the same
// scope covers it: a principal, action or resource pattern that matches
// everything the new one matches (IAM's * and ? wildcards; actions
// case-insensitively), a CIDR that contains the new one, a protocol and
// port range that contain the new ones, and conditions that are a subset
// of the new ones. Hence a template is never broadened against itself or
// against a template that grants more.
//
// Deny statements are shown in the diff but never counted: the rule is
// about what is allowed that was not.
package review
