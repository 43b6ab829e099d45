// Package cfn reads, expands and writes CloudFormation templates that use
// client-side local modules (the Modules, Constants and related sections of
// the aws-cli "local modules" design).
//
// # Reading and writing
//
// Parse reads YAML (with the short-form tags !Ref, !GetAtt, !Sub, ...) or
// JSON into a yaml.Node tree that keeps key order and line numbers. Short
// forms are rewritten to their long form (!Ref X becomes {Ref: X}) so that
// the engine sees one shape; EncodeYAML writes the short forms back and
// EncodeJSON writes long forms.
//
// # Expansion
//
// Package expands every module instance in one pass over each file: module
// files are read and parsed once, resources are indexed by name, and a
// module's outputs are resolved only when something refers to them, so the
// cost grows linearly with the number of module instances.
//
// Each module instance is expanded straight into the top template's terms:
// its Properties are resolved in the including file, its resources are
// renamed with the accumulated prefix (Outer + Inner + Bucket), and a name
// the module does not define (a parent parameter, AWS::Region) is left as
// written. A parameter with neither a value nor a Default is an error only
// where it is used (ErrMissingParameter, at the module entry), as in the
// aws-cli: modules meant for Fn::Invoke often leave some unset.
//
// Conditions of a module are evaluated from its parameters; parameters of
// the top template are deploy-time values, so every condition that needs
// one is emitted into the parent as Prefix+Name, used or not (a clash is
// ErrNameClash); one that comes down to another (!And [!Condition A,
// <true>]) is emitted with a copy of that one's expression, and its uses
// name that one. The top template's own conditions are left as written.
//
// A module parameter declared CommaDelimitedList or List<...> and given a
// comma-separated string is the list it stands for (items trimmed, as
// CloudFormation does), so Fn::Select, Fn::Join, Fn::Length, Fn::Split,
// GetAtt Name[i] and ForEach see a list.
//
// Overrides are resolved in the scope of the file that writes them: inside
// a module their Ref, GetAtt, Sub, DependsOn and Condition name that
// module's resources and conditions and get its prefix; at the top level
// they stay as written. A name that file does not define may name a
// resource or parameter of the overridden module as the module writes it
// (DependsOn: Queue for the module's Queue, ${Name} for its parameter
// Name), as in the aws-cli; on a clash the file's own name wins.
//
// # Checks
//
// A Modules entry takes only Source, Properties, Overrides, ForEach,
// Condition, DependsOn and Hash (Type: LocalModule is ignored); a module
// output that is a mapping has a Value, and no output Value is null;
// every logical ID made is 1 to 255 letters and digits. After expansion
// every Ref, Fn::GetAtt, DependsOn, Condition and Sub variable must name
// a parameter, resource, condition, pseudo parameter or Fn::ForEach
// identifier of the packaged template (ErrDangling, placed where the name
// was written, with the nearest name);
// names CloudFormation's Fn::ForEach or the AWS::Serverless transform make
// count, and a template with another macro is not checked. A Sub variable
// naming a list parameter of the packaged template (CommaDelimitedList,
// List<...>, an SSM list) or AWS::NotificationARNs is ErrInvalid.
//
// # Extension points
//
// Resolving a module Source (and an Fn::InsertFile path) goes through one
// interface, Sources; NewSources backs it with package source (local files
// bounded by the project folder, Packages zips, HTTPS and S3, with Hash
// pinning).
// Intrinsic functions are dispatched from one table (intrinsics in
// resolve.go): Ref, Fn::GetAtt, Fn::Sub, Fn::If, Fn::Select, Fn::Join,
// Fn::Split, Fn::Length, Fn::FindInMap, Fn::Merge (package merge),
// Fn::Flatten (package flatten), Fn::InsertFile and Fn::Invoke. ParameterSchema is checked with package
// paramschema before a module is expanded.
//
// # ForEach
//
// ForEach on a module or resource, and Fn::ForEach::Name entries in
// Modules (and in a module's Resources; the top template's own
// Fn::ForEach resources are CloudFormation's and are kept), repeat the
// entry once per item of a list, a comma-separated string or a map (its
// keys, in order), given inline, by a parameter (for a parameter of the
// top template, its Default) or by Fn::Flatten. Instances are named Name0,
// Name1, ... unless the name uses &{Identifier} (its letters and digits
// only, as in CloudFormation) or ${Identifier}. In the entry,
// $Identifier / ${Identifier} is the item or map key, $Index / ${Index}
// its position, and $Value / ${Value} the item, the object or the map
// entry's value, with $Value.Field / ${Value.Field} reaching into it: a
// reference that is a whole value (or the target of !Ref or !GetAtt, as
// in !GetAtt $Value.Port) is replaced by the value itself, of any type;
// inside a longer string it is written as text.
// Name[0].Out, Name[key].Out (the key may hold dots), Name[*].Out (a
// list, in order) and the
// dotted forms Name.key.Out and Name.*.Out work in Fn::GetAtt and in
// Fn::Sub, and on Map parameters (Map[*], Map[key], Map[key].Attr). A Sub
// variable that resolves to a list or an object is an error.
//
// # Transform order
//
// The packaged template's Transform list holds the parent's transforms first,
// in their own order, then each module's transforms that are not already
// listed, in the order the modules are declared, a module's own before
// those of the modules it includes (the same rule at every level).
// CloudFormation runs macros in list order, so the parent's own macros run
// before any macro that a module brings in.
//
// # rain's directives
//
// Each file (the template, every module) is read in rain's order: its Rain
// section (Constants join the file's Constants, usable as ${Rain::Name} in
// a Sub and as !Rain::Constant; Packages from a folder rewrite the file's
// $alias/path module types, zips and HTTPS become Packages entries), then
// !Rain::Embed and !Rain::Include (through Sources, from the folder of the
// file that holds them, bounded like modules), then its resources whose
// Type is !Rain::Module (or $alias/path), which become Modules entries
// with rain's rules: an override of a property named like a module
// parameter is refused, an override's DependsOn adds to the resource's,
// and Metadata.Rain.IfParam / IfNotParam keep a module resource only when
// the parameter is (not) set. !Rain::S3 and !Rain::S3Http are intrinsics:
// their file or folder goes to Options.Artifacts (ErrNoArtifacts when nil),
// which returns the bucket and key to write. !Rain::Env is refused (a build
// must not depend on the environment), and so is any other Rain:: name.
package cfn
