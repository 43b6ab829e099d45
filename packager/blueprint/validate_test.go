package blueprint

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// res is a minimal valid resources section, appended by cases that do not
// test resources.
const res = `
resources:
  r:
    type: aws/sns/topic
    spec: {}
`

func TestRules(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		class error  // nil: valid
		msg   string // substring of the error
		pos   string // ":line:col:" of the error, when checked
	}{
		// version
		{"unquoted version", "version: 2023-04-20" + res, nil, "", ""},
		{"quoted version", `version: "2023-04-20"` + res, nil, "", ""},
		{"json", `{"version": "2023-04-20", "resources": {"r": {"type": "aws/sns/topic", "spec": {}}}}`, nil, "", ""},
		{"old version", "version: 2021-12-18" + res, ErrVersion, `version "2021-12-18" is not supported`, ":1:10:"},
		{"no version", strings.TrimPrefix(res, "\n"), ErrSchema, `missing the required field "version"`, ":1:1:"},
		{"no resources", "version: 2023-04-20\n", ErrSchema, `missing the required field "resources"`, ""},
		{"unknown top-level", "version: 2023-04-20\nfoo: 1" + res, ErrSchema, `unknown field "foo" in the blueprint`, ":2:1:"},
		{"not a mapping", "- a\n", ErrSchema, "must be a mapping", ""},
		{"bad yaml", "version: [", ErrSyntax, "not valid YAML", ""},
		{"anchor", "version: 2023-04-20\nmetadata: &m {a: 1}\nx: *m" + res, ErrSyntax, "anchors and aliases", ""},
		{"tag", "version: 2023-04-20\nmetadata: {a: !!str 1}" + res, ErrSyntax, "YAML tags", ""},
		{"duplicate key", "version: 2023-04-20\nmetadata: {a: 1, a: 2}" + res, ErrSchema, `duplicate key "a"`, ""},
		{"sub in key", "version: 2023-04-20\nmetadata: {\"${variables.x}\": 1}" + res, ErrSubstitutionNotAllowed, "not allowed in keys", ""},
		// transform
		{"transform string", "version: 2023-04-20\ntransform: celerity-2023-04-20" + res, nil, "", ""},
		{"transform list", "version: 2023-04-20\ntransform: [a, b]" + res, nil, "", ""},
		{"transform mapping", "version: 2023-04-20\ntransform: {a: b}" + res, ErrSchema, "transform must be a string or a list", ""},
		{"transform nested", "version: 2023-04-20\ntransform: [a, [b]]" + res, ErrSchema, "transform list items must be strings", ""},
		{"transform sub", "version: 2023-04-20\ntransform: ['${variables.t}']" + res, ErrSubstitutionNotAllowed, "not allowed in transform", ""},
		// variables
		{"variable types", "version: 2023-04-20\nvariables:\n  a: {type: string}\n  b: {type: integer, default: 3}\n  c: {type: float, default: 1.5}\n  d: {type: boolean, default: true}\n  e: {type: aws/ec2/instanceType, default: t3.micro, allowedValues: [t3.micro, t3.small]}\n  f: {type: string, secret: true}" + res, nil, "", ""},
		{"variable no type", "version: 2023-04-20\nvariables:\n  a: {description: x}" + res, ErrSchema, `variable "a" is missing the required field "type"`, ""},
		{"variable bad type", "version: 2023-04-20\nvariables:\n  a: {type: number}" + res, ErrSchema, `has type "number"`, ""},
		{"variable default type", "version: 2023-04-20\nvariables:\n  a: {type: integer, default: abc}" + res, ErrSchema, "default is a string; it must be of type integer", ""},
		{"variable allowed type", "version: 2023-04-20\nvariables:\n  a: {type: string, allowedValues: [x, 3]}" + res, ErrSchema, "allowedValues holds an integer", ""},
		{"variable boolean allowed", "version: 2023-04-20\nvariables:\n  a: {type: boolean, allowedValues: [true]}" + res, ErrSchema, "do not support allowedValues", ""},
		{"variable default not allowed", "version: 2023-04-20\nvariables:\n  a: {type: string, default: z, allowedValues: [x, y]}" + res, ErrSchema, "is not one of its allowedValues", ""},
		{"variable secret type", "version: 2023-04-20\nvariables:\n  a: {type: string, secret: yes-please}" + res, ErrSchema, "secret must be true or false", ""},
		{"variable sub", "version: 2023-04-20\nvariables:\n  a: {type: string, description: '${variables.b}'}\n  b: {type: string}" + res, ErrSubstitutionNotAllowed, "not allowed in variable definitions", ""},
		// values
		{"value ok", "version: 2023-04-20\nvariables:\n  n: {type: integer}\nvalues:\n  a: {type: integer, value: '${variables.n}'}\n  b: {type: string, value: 'x-${values.a}'}\n  c: {type: integer, value: '42'}\n  d:\n    type: array\n    value: |\n      ${list(\n        values.a,\n        values.c\n      )}" + res, nil, "", ""},
		{"value missing", "version: 2023-04-20\nvalues:\n  a: {type: string}" + res, ErrSchema, `missing the required field "value"`, ""},
		{"value bad type", "version: 2023-04-20\nvalues:\n  a: {type: tuple, value: x}" + res, ErrSchema, `unsupported type "tuple"`, ""},
		{"value type sub", "version: 2023-04-20\nvalues:\n  a: {type: '${variables.t}', value: x}" + res, ErrSubstitutionNotAllowed, "not allowed in a value's type", ""},
		{"value literal int", "version: 2023-04-20\nvalues:\n  a: {type: integer, value: abc}" + res, ErrType, `does not parse as integer`, ""},
		{"value literal array", "version: 2023-04-20\nvalues:\n  a: {type: array, value: abc}" + res, ErrType, "must come from a ${..} substitution", ""},
		{"value mapping", "version: 2023-04-20\nvalues:\n  a: {type: object, value: {x: 1}}" + res, ErrSchema, "value must be a string", ""},
		{"value sub type", "version: 2023-04-20\nvariables:\n  s: {type: string}\nvalues:\n  a: {type: array, value: '${variables.s}'}" + res, ErrType, `value "a" must yield array, string found`, ""},
		{"value mixed", "version: 2023-04-20\nvalues:\n  a: {type: integer, value: '1${len(\"x\")}'}" + res, ErrType, "mixes text and substitutions", ""},
		{"value cycle", "version: 2023-04-20\nvalues:\n  a: {type: string, value: '${values.b}'}\n  b: {type: string, value: '${values.a}'}" + res, ErrReferenceCycle, "values.a -> values.b -> values.a", ""},
		{"value self", "version: 2023-04-20\nvalues:\n  a: {type: string, value: '${values.a}'}" + res, ErrReferenceCycle, "values.a -> values.a", ""},
		{"value scalar path", "version: 2023-04-20\nvalues:\n  a: {type: string, value: x}\n  b: {type: string, value: '${values.a.x}'}" + res, ErrReference, "values.a is a string; it has no fields", ""},
		// data sources
		{"datasource ok", "version: 2023-04-20\nvariables:\n  env: {type: string}\ndatasources:\n  net:\n    type: aws/vpc\n    description: net for ${variables.env}\n    metadata: {displayName: '${variables.env}', annotations: {a: 1}, custom: {x: [1]}}\n    filter: {field: tags, operator: has key, search: '${variables.env}'}\n    exports: {vpc: {type: string, aliasFor: vpcId}, subnets: {type: array}}\nresources:\n  r:\n    type: aws/sns/topic\n    spec: {a: '${datasources.net.vpc}', b: '${datasources.net.subnets[0]}'}", nil, "", ""},
		{"datasource missing", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc}" + res, ErrSchema, `missing the required field "filter"`, ""},
		{"datasource operator", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: begins with, search: x}, exports: {a: {type: string}}}" + res, ErrSchema, `unsupported filter operator "begins with"`, ""},
		{"datasource field sub", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: 'a.${variables.x}', operator: '=', search: x}, exports: {a: {type: string}}}" + res, ErrSubstitutionNotAllowed, "filter field", ""},
		{"datasource operator sub", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: '${variables.x}', search: x}, exports: {a: {type: string}}}" + res, ErrSubstitutionNotAllowed, "filter operator", ""},
		{"datasource export sub", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: '=', search: x}, exports: {a: {type: string, aliasFor: '${variables.x}'}}}" + res, ErrSubstitutionNotAllowed, "data source exports", ""},
		{"datasource type sub", "version: 2023-04-20\ndatasources:\n  net: {type: '${variables.x}', filter: {field: a, operator: '=', search: x}, exports: {a: {type: string}}}" + res, ErrSubstitutionNotAllowed, "data source's type", ""},
		{"datasource export type", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: '=', search: x}, exports: {a: {type: tuple}}}" + res, ErrSchema, `unsupported field type "tuple"`, ""},
		{"filter in scalar", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: in, search: x}, exports: {a: {type: string}}}" + res, ErrType, `needs a search value of type array`, ""},
		{"filter has key list", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: not has key, search: [x]}, exports: {a: {type: string}}}" + res, ErrType, `needs a search value of type string`, ""},
		{"filter contains list", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: contains, search: [x]}, exports: {a: {type: string}}}" + res, ErrType, "needs a search value", ""},
		{"filter starts with int", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: starts with, search: 3}, exports: {a: {type: string}}}" + res, ErrType, "needs a search value of type string", ""},
		{"filter in sub", "version: 2023-04-20\nvariables:\n  s: {type: string}\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: in, search: '${variables.s}'}, exports: {a: {type: string}}}" + res, ErrType, "must yield array, string found", ""},
		{"filter equals list", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: '!=', search: [a, b]}, exports: {a: {type: string}}}" + res, nil, "", ""},
		{"datasource unknown export", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: '=', search: x}, exports: {a: {type: string}}}\nresources:\n  r: {type: aws/sns/topic, spec: {x: '${datasources.net.b}'}}", ErrReference, `does not export "b"`, ""},
		{"datasource index scalar", "version: 2023-04-20\ndatasources:\n  net: {type: aws/vpc, filter: {field: a, operator: '=', search: x}, exports: {a: {type: string}}}\nresources:\n  r: {type: aws/sns/topic, spec: {x: '${datasources.net.a[0]}'}}", ErrReference, "only array fields take an index", ""},
		// resources
		{"resource type format", "version: 2023-04-20\nresources:\n  r: {type: topic, spec: {}}", ErrSchema, `has type "topic"`, ""},
		{"resource type sub", "version: 2023-04-20\nresources:\n  r: {type: '${variables.t}', spec: {}}", ErrSubstitutionNotAllowed, "resource's type", ""},
		{"resource no spec", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic}", ErrSchema, `missing the required field "spec"`, ""},
		{"condition ok", "version: 2023-04-20\nvariables:\n  env: {type: string}\n  on: {type: boolean}\nresources:\n  r:\n    type: aws/sns/topic\n    condition:\n      and:\n        - '${eq(variables.env, \"prod\")}'\n        - or: ['${variables.on}', {not: '${variables.on}'}]\n    spec: {}", nil, "", ""},
		{"condition two", "version: 2023-04-20\nvariables:\n  on: {type: boolean}\nresources:\n  r:\n    type: aws/sns/topic\n    condition: {and: ['${variables.on}'], not: '${variables.on}'}\n    spec: {}", ErrSchema, `only one of "and", "or" or "not" can be set`, ""},
		{"condition none", "version: 2023-04-20\nresources:\n  r:\n    type: aws/sns/topic\n    condition: {}\n    spec: {}", ErrSchema, `only one of "and", "or" or "not"`, ""},
		{"condition literal", "version: 2023-04-20\nresources:\n  r:\n    type: aws/sns/topic\n    condition: yes\n    spec: {}", ErrSchema, "must be a ${..} substitution yielding a boolean", ""},
		{"condition type", "version: 2023-04-20\nresources:\n  r:\n    type: aws/sns/topic\n    condition: '${len(\"a\")}'\n    spec: {}", ErrType, "must yield boolean, integer found", ""},
		{"each ok", "version: 2023-04-20\nvariables:\n  b: {type: string}\nresources:\n  r:\n    type: aws/s3/bucket\n    each: ${jsondecode(variables.b)}\n    metadata: {displayName: 'bucket ${i}'}\n    spec: {name: '${elem.name}-${i}', lock: '${elem[\"lock\"]}'}\n  s:\n    type: aws/sns/topic\n    spec: {b: '${resources.r[0].spec.name}', c: '${r[].state.arn}'}", nil, "", ""},
		{"each literal", "version: 2023-04-20\nresources:\n  r: {type: aws/s3/bucket, each: abc, spec: {}}", ErrEachType, "each must be one ${..} substitution", ""},
		{"each string", "version: 2023-04-20\nvariables:\n  b: {type: string}\nresources:\n  r: {type: aws/s3/bucket, each: '${variables.b}', spec: {}}", ErrEachType, "must yield array, string found", ""},
		{"each elem in each", "version: 2023-04-20\nresources:\n  r: {type: aws/s3/bucket, each: '${elem}', spec: {}}", ErrElemOutsideEach, "in each itself", ""},
		{"each resource dep", "version: 2023-04-20\nresources:\n  q: {type: aws/sqs/queue, spec: {}}\n  r: {type: aws/s3/bucket, each: '${resources.q.state.list}', spec: {}}", ErrEachDependency, `element type "resource"`, ""},
		{"each child dep via value", "version: 2023-04-20\nvalues:\n  l: {type: array, value: '${children.c.list}'}\ninclude:\n  c: {path: 'remote.yaml', metadata: {sourceType: aws/s3}}\nresources:\n  r: {type: aws/s3/bucket, each: '${values.l}', spec: {}}", ErrEachDependency, `element type "child"`, ""},
		{"elem outside", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: '${elem.x}'}}", ErrElemOutsideEach, "outside a resource with each", ":3:41:"},
		{"position after escapes", "{\"version\": \"2023-04-20\", \"resources\": {\"r\": {\"type\": \"aws/sns/topic\", \"spec\": {\"a\": \"${eq(\\\"a\\\", \\\"b\\\")} ${elem}\"}}}}", ErrElemOutsideEach, "${elem}", ":1:109:"},
		{"position single quoted", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: 'it''s ${elem}'}}", ErrElemOutsideEach, "${elem}", ":3:47:"},
		{"i outside", "version: 2023-04-20\nvalues:\n  v: {type: integer, value: '${i}'}" + res, ErrElemOutsideEach, "${i} is used outside", ""},
		{"labels sub", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, metadata: {labels: {app: '${variables.a}'}}, spec: {}}", ErrSubstitutionNotAllowed, "resource labels", ""},
		{"linkSelector sub", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, linkSelector: {byLabel: {app: '${variables.a}'}}, spec: {}}", ErrSubstitutionNotAllowed, "linkSelector", ""},
		{"linkSelector shape", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, linkSelector: {byName: x}, spec: {}}", ErrSchema, `unknown field "byName"`, ""},
		{"annotations scalar", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, metadata: {annotations: {a: [1]}}, spec: {}}", ErrSchema, "annotations.a must be a string, integer, float or boolean", ""},
		{"resource field", "version: 2023-04-20\nresources:\n  q: {type: aws/sqs/queue, spec: {}}\n  r: {type: aws/sns/topic, spec: {a: '${resources.q.arn}'}}", ErrReference, "accessed through .state, .spec or .metadata", ""},
		{"resource metadata field", "version: 2023-04-20\nresources:\n  q: {type: aws/sqs/queue, spec: {}}\n  r: {type: aws/sns/topic, spec: {a: '${q.metadata.name}'}}", ErrReference, "metadata fields are displayName, labels, annotations and custom", ""},
		{"resource index no each", "version: 2023-04-20\nresources:\n  q: {type: aws/sqs/queue, spec: {}}\n  r: {type: aws/sns/topic, spec: {a: '${resources.q[0].spec.x}'}}", ErrReference, "has no each", ""},
		{"resource self", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: '${resources.r.spec.b}'}}", ErrReferenceCycle, "resources.r -> resources.r", ""},
		{"dependsOn unknown", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, dependsOn: [ghost], spec: {}}", ErrReference, `depends on "ghost", which is not defined`, ""},
		{"link cycle", "version: 2023-04-20\nresources:\n  f: {type: aws/lambda/function, metadata: {labels: {app: a}}, linkSelector: {byLabel: {app: b}}, spec: {}}\n  t: {type: aws/dynamodb/table, metadata: {labels: {app: b}}, linkSelector: {byLabel: {app: a}}, spec: {}}", ErrReferenceCycle, "resources.f -> resources.t -> resources.f", ""},
		// issue 19 item 14: labels and byLabel are mapping[string, string]:
		// a JSON number, boolean or float is not a string; YAML plain
		// scalars are read as strings.
		{"labels json number", `{"version": "2023-04-20", "resources": {"r": {"type": "aws/sns/topic", "metadata": {"labels": {"app": 1}}, "spec": {}}}}`, ErrSchema, "labels.app must be a string, found an integer", ":1:103:"},
		{"labels json bool", `{"version": "2023-04-20", "resources": {"r": {"type": "aws/sns/topic", "metadata": {"labels": {"app": true}}, "spec": {}}}}`, ErrSchema, "labels.app must be a string, found a boolean", ""},
		{"labels json float", `{"version": "2023-04-20", "resources": {"r": {"type": "aws/sns/topic", "metadata": {"labels": {"v": 1.5}}, "spec": {}}}}`, ErrSchema, "labels.v must be a string, found a float", ""},
		{"byLabel json number", `{"version": "2023-04-20", "resources": {"r": {"type": "aws/sns/topic", "linkSelector": {"byLabel": {"app": 2}}, "spec": {}}}}`, ErrSchema, "byLabel.app must be a string, found an integer", ""},
		{"labels json strings", `{"version": "2023-04-20", "resources": {"r": {"type": "aws/sns/topic", "metadata": {"labels": {"app": "1"}}, "linkSelector": {"byLabel": {"app": "true"}}, "spec": {}}}}`, nil, "", ""},
		{"labels yaml plain", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, metadata: {labels: {app: 1, on: true}}, linkSelector: {byLabel: {v: 1.5}}, spec: {}}", nil, "", ""},
		{"soft link same service", "version: 2023-04-20\nresources:\n  s: {type: aws/dynamodb/stream, metadata: {labels: {app: a}}, linkSelector: {byLabel: {app: a}}, spec: {}}\n  t: {type: aws/dynamodb/table, metadata: {labels: {app: a}}, linkSelector: {byLabel: {app: a}}, spec: {}}", nil, "", ""},
		// references
		{"undefined variable", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: '${variables.nope}'}}", ErrReference, "variables.nope is not defined", ""},
		{"undefined value", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: '${values.nope}'}}", ErrReference, "values.nope is not defined", ""},
		{"undefined datasource", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: '${datasources.nope.x}'}}", ErrReference, "datasources.nope is not defined", ""},
		{"undefined child", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: '${children.nope.x}'}}", ErrReference, "children.nope is not defined", ""},
		{"variable nested", "version: 2023-04-20\nvariables:\n  v: {type: string}\nresources:\n  r: {type: aws/sns/topic, spec: {a: '${variables.v.x}'}}", ErrSubstitution, "can not have nested fields", ""},
		{"interpolate array", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: 'x-${list(1)}'}}", ErrType, "can not be interpolated into a string", ""},
		{"interpolate resource list", "version: 2023-04-20\nresources:\n  q: {type: aws/sqs/queue, spec: {l: [1]}}\n  r: {type: aws/sns/topic, spec: {a: 'x-${resources.q.spec.l}'}}", ErrType, `${resources.q.spec.l} yields array (written in resource "q"'s spec, line 3)`, ":4:43:"},
		{"interpolate each resource list", "version: 2023-04-20\nresources:\n  q: {type: aws/sqs/queue, each: '${list(1)}', spec: {l: [1]}}\n  r: {type: aws/sns/topic, spec: {a: 'x-${resources.q[0].spec.l}'}}", ErrType, "yields array", ""},
		{"interpolate each resource without index", "version: 2023-04-20\nresources:\n  q: {type: aws/sqs/queue, each: '${list(1)}', spec: {l: [1]}}\n  r: {type: aws/sns/topic, spec: {a: 'x-${resources.q.spec.l[0]}'}}\nexports:\n  e: {type: string, field: resources.q.spec.l}", nil, "", ""},
		{"interpolate resource labels", "version: 2023-04-20\nresources:\n  q: {type: aws/sqs/queue, spec: {}}\n  r: {type: aws/sns/topic, spec: {a: 'x-${resources.q.metadata.labels}'}}", ErrType, "a resource's metadata.labels is always a mapping", ""},
		{"interpolate resource scalar", "version: 2023-04-20\nresources:\n  q: {type: aws/sqs/queue, spec: {n: 1, l: [a]}}\n  r: {type: aws/sns/topic, spec: {a: 'x-${resources.q.spec.n}-${resources.q.spec.l[0]}-${resources.q.state.l}'}}", nil, "", ""},
		{"value of resource field", "version: 2023-04-20\nvalues:\n  v: {type: string, value: '${resources.q.spec.l}'}\nresources:\n  q: {type: aws/sqs/queue, spec: {l: [1]}}", ErrType, `value "v" must yield string, but ${resources.q.spec.l} yields array`, ""},
		{"each over a number", "version: 2023-04-20\nresources:\n  r: {type: aws/s3/bucket, each: '${jsondecode(\"3\")}', spec: {}}", ErrEachType, `yields an integer, but each takes an array; pass a list`, ""},
		{"interpolate one item", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: 'x-${jsondecode(\"[1]\")}'}}", ErrType, "yields an array of 1 item, which", ""},
		{"unterminated", "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: 'x-${values.a'}}", ErrSubstitution, "unterminated substitution", ""},
		{"metadata subs", "version: 2023-04-20\nvariables:\n  v: {type: string}\nmetadata:\n  build: ${variables.v}\n  args: ['NODE_ENV=${variables.v}']" + res, nil, "", ""},
		// exports
		{"export ok", "version: 2023-04-20\nvariables:\n  v: {type: string}\nexports:\n  e: {type: string, field: variables.v, description: 'from ${variables.v}'}\n  f: {type: string, field: resources.r.state.arn}" + res, nil, "", ""},
		{"export field sub", "version: 2023-04-20\nexports:\n  e: {type: string, field: 'resources.r.${variables.f}'}" + res, ErrSubstitutionNotAllowed, "export's field", ""},
		{"export field call", "version: 2023-04-20\nexports:\n  e: {type: string, field: 'len(\"x\")'}" + res, ErrSchema, "must reference a variable", ""},
		{"export unresolved", "version: 2023-04-20\nexports:\n  e: {type: string, field: variables.nope}" + res, ErrReference, "variables.nope is not defined", ""},
		{"export type", "version: 2023-04-20\nvariables:\n  v: {type: string}\nexports:\n  e: {type: integer, field: variables.v}" + res, ErrType, `export "e".field must yield integer, string found`, ""},
		{"export type sub", "version: 2023-04-20\nexports:\n  e: {type: '${variables.t}', field: resources.r.state.arn}" + res, ErrSubstitutionNotAllowed, "export's type", ""},
		{"export bad type", "version: 2023-04-20\nexports:\n  e: {type: map, field: resources.r.state.arn}" + res, ErrSchema, `unsupported type "map"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := loadString(t, tt.src)
			if tt.class == nil {
				if err != nil {
					t.Fatalf("want valid, got:\n%v", err)
				}
				return
			}
			if !errors.Is(err, tt.class) {
				t.Fatalf("want %v, got:\n%v", tt.class, err)
			}
			var hit *Error
			var list ErrorList
			errors.As(err, &list)
			for _, e := range list {
				if errors.Is(e, tt.class) && strings.Contains(e.Msg, tt.msg) {
					hit = e
				}
			}
			if hit == nil {
				t.Fatalf("no %v error containing %q in:\n%v", tt.class, tt.msg, err)
			}
			if tt.pos != "" && !strings.Contains(hit.Error(), tt.pos) {
				t.Fatalf("error %q is not at %s", hit.Error(), tt.pos)
			}
		})
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fanOut makes a chain of blueprints each including the next 8 times:
// 8^4 loads without the MaxBlueprints bound.
func fanOut() map[string]string {
	files := map[string]string{}
	for i := 1; i <= 5; i++ {
		src := "version: 2023-04-20" + res
		if i < 5 {
			src += "include:\n"
			for j := 0; j < 8; j++ {
				src += "  n" + itoa(j) + ": {path: 'd" + itoa(i+1) + ".yaml'}\n"
			}
		}
		files["d"+itoa(i)+".yaml"] = src
	}
	return files
}

const child = `version: 2023-04-20
variables:
  env: {type: string}
  n: {type: integer, default: 1}
resources:
  t: {type: aws/sns/topic, spec: {name: '${variables.env}'}}
`

func TestIncludes(t *testing.T) {
	chain := func(n int) map[string]string {
		files := map[string]string{}
		for i := 1; i <= n; i++ {
			src := "version: 2023-04-20" + res
			if i < n {
				src += "include:\n  next: {path: 'd" + itoa(i+1) + ".yaml'}\n"
			}
			files["d"+itoa(i)+".yaml"] = src
		}
		return files
	}
	tests := []struct {
		name  string
		files map[string]string
		vars  map[string]any
		class error
		msg   string
	}{
		{"relative", map[string]string{"main.yaml": "version: 2023-04-20" + res + "include:\n  c: {path: sub/child.yaml, variables: {env: prod}}\n", "sub/child.yaml": child}, nil, nil, ""},
		{"cwd", map[string]string{"main.yaml": "version: 2023-04-20" + res + "include:\n  c: {path: '${cwd()}/child.yaml', variables: {env: prod, n: 2}}\n", "child.yaml": child}, nil, nil, ""},
		{"path from variable", map[string]string{"main.yaml": "version: 2023-04-20\nvariables:\n  f: {type: string, default: child.yaml}" + res + "include:\n  c: {path: '${variables.f}', variables: {env: x}}\n", "child.yaml": child}, nil, nil, ""},
		{"path from passed variable", map[string]string{"main.yaml": "version: 2023-04-20\nvariables:\n  f: {type: string}" + res + "include:\n  c: {path: '${variables.f}', variables: {env: x}}\n"}, map[string]any{"f": "missing.yaml"}, ErrInclude, "missing.yaml: no such file"},
		{"deploy-time path", map[string]string{"main.yaml": "version: 2023-04-20\nvariables:\n  f: {type: string}" + res + "include:\n  c: {path: '${variables.f}'}\n"}, nil, nil, ""},
		{"remote", map[string]string{"main.yaml": "version: 2023-04-20" + res + "include:\n  c: {path: core.yaml, metadata: {sourceType: aws/s3}}\n"}, nil, nil, ""},
		{"missing file", map[string]string{"main.yaml": "version: 2023-04-20" + res + "include:\n  c: {path: nope.yaml}\n"}, nil, ErrInclude, "nope.yaml: no such file or directory"},
		{"unknown variable", map[string]string{"main.yaml": "version: 2023-04-20" + res + "include:\n  c: {path: child.yaml, variables: {env: a, region: b}}\n", "child.yaml": child}, nil, ErrInclude, `passes variable "region"`},
		{"wrong type", map[string]string{"main.yaml": "version: 2023-04-20" + res + "include:\n  c: {path: child.yaml, variables: {env: a, n: true}}\n", "child.yaml": child}, nil, ErrInclude, `variable "n" of`},
		{"missing required", map[string]string{"main.yaml": "version: 2023-04-20" + res + "include:\n  c: {path: child.yaml}\n", "child.yaml": child}, nil, ErrInclude, `does not pass variable "env"`},
		{"deploy-time value ok", map[string]string{"main.yaml": "version: 2023-04-20" + res + "include:\n  c: {path: child.yaml, variables: {env: '${resources.r.state.arn}'}}\n", "child.yaml": child}, nil, nil, ""},
		{"child export", map[string]string{"main.yaml": "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: '${children.c.topicArn}'}}\ninclude:\n  c: {path: child.yaml, variables: {env: a}}\n", "child.yaml": child + "exports:\n  arn: {type: string, field: resources.t.state.arn}\n"}, nil, ErrReference, `child blueprint "c" (`},
		{"child invalid", map[string]string{"main.yaml": "version: 2023-04-20" + res + "include:\n  c: {path: child.yaml}\n", "child.yaml": "version: 2023-04-20\nresources: {x: {type: nope, spec: {}}}"}, nil, ErrSchema, `has type "nope"`},
		{"self include", map[string]string{"main.yaml": "version: 2023-04-20" + res + "include:\n  me: {path: main.yaml}\n"}, nil, ErrIncludeCycle, `include "me" makes a cycle`},
		{"depth 5 ok", chain(5), nil, nil, ""},
		{"depth 6", chain(6), nil, ErrIncludeDepth, "would be blueprint depth 6"},
		{"outside root", map[string]string{"proj/main.yaml": "version: 2023-04-20" + res + "include:\n  c: {path: ../child.yaml, variables: {env: a}}\n", "child.yaml": child}, nil, ErrInclude, "lies outside the project folder"},
		{"too many", fanOut(), nil, ErrInclude, "more than 256 blueprint files"},
		{"root variable type", map[string]string{"main.yaml": "version: 2023-04-20\nvariables:\n  n: {type: integer}" + res}, map[string]any{"n": "x"}, ErrSchema, `variable "n" of`},
		{"root variable unknown", map[string]string{"main.yaml": "version: 2023-04-20" + res}, map[string]any{"zz": "x"}, ErrSchema, `variable "zz", which the blueprint does not define`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			main := filepath.Join(dir, "main.yaml")
			if _, ok := tt.files["main.yaml"]; !ok {
				main = filepath.Join(dir, "d1.yaml")
			}
			root := ""
			if tt.name == "outside root" {
				root = filepath.Join(dir, "proj")
				main = filepath.Join(root, "main.yaml")
			}
			bp, err := Load(main, Options{Cwd: dir, Root: root, Variables: tt.vars})
			if tt.class == nil {
				if err != nil {
					t.Fatalf("want valid, got:\n%v", err)
				}
				if bp == nil {
					t.Fatal("nil blueprint")
				}
				return
			}
			if !errors.Is(err, tt.class) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("want %v containing %q, got:\n%v", tt.class, tt.msg, err)
			}
		})
	}
}

func TestMaxErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 2023-04-20\nresources:\n  r:\n    type: aws/sns/topic\n    spec:\n")
	for i := 0; i < 2*MaxErrors; i++ {
		b.WriteString("      a" + itoa(i) + ": ${variables.nope}\n")
	}
	err := loadString(t, b.String())
	var list ErrorList
	if !errors.As(err, &list) || len(list) != MaxErrors {
		t.Fatalf("got %d errors, want %d", len(list), MaxErrors)
	}
	if !strings.Contains(err.Error(), "too many errors; only the first 499 are shown") {
		t.Fatal("no note about the errors left out")
	}
}

// Issue 19 item 12: an include naming a FIFO is refused at once, with or
// without a project folder (the rule every project path follows,
// internal/projectfs); it waited for a writer.
func TestIncludeFIFO(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	for _, inRoot := range []bool{false, true} {
		dir := writeFiles(t, map[string]string{"main.yaml": "version: 2023-04-20" + res + "include:\n  c: {path: fifo.yaml}\n"})
		if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
			t.Fatal(err)
		}
		opts := Options{Cwd: dir}
		if inRoot {
			opts.Root = dir
		}
		done := make(chan error, 1)
		go func() { _, err := Load(filepath.Join(dir, "main.yaml"), opts); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrInclude) || !strings.Contains(err.Error(), "not a regular file (a FIFO)") {
				t.Fatalf("root %v: want ErrInclude (not a regular file), got %v", inRoot, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("root %v: an include of a FIFO still waits for a writer", inRoot)
		}
	}
}
