package assembly

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/internal/jsontext"
)

// CheckOptions tune Check. The zero value reads an assembly someone else
// made: unknown keys, the droplet property tables (which the spec gives
// "for illustration purpose only") and unknown protocols are warnings.
type CheckOptions struct {
	// Strict turns every warning into an error.
	Strict bool
	// Writing holds an assembly being made (assemble build) to the strict
	// side of what its author can fix: unknown keys and the property
	// tables of the known droplet kinds are errors. Unknown protocols and
	// droplet kinds stay warnings, so custom droplets can be built.
	Writing bool
}

// A Finding is one thing Check found.
type Finding struct {
	Severity Severity
	// Rule is the stable code of the rule (see Rules), e.g. "missing-file".
	Rule string
	// Err wraps the rule's sentinel (errors.Is works) and ErrManifest; nil
	// for notes.
	Err error
	// Droplet is the logical ID, empty for the manifest as a whole; Field
	// the dotted path inside the droplet (or the manifest), may be empty.
	Droplet, Field string
	// Message says what is wrong, without the droplet, field or rule.
	Message string
}

// String is the finding's text, the same in every command:
// "droplet Web: properties.template: names "t.yml", which is not a file in
// the archive [missing-file]".
func (f Finding) String() string {
	var b strings.Builder
	if f.Droplet != "" {
		fmt.Fprintf(&b, "droplet %s: ", f.Droplet)
	}
	if f.Field != "" {
		b.WriteString(f.Field + ": ")
	}
	b.WriteString(f.Detail())
	return b.String()
}

// Detail is the message and the rule, without the droplet and field.
func (f Finding) Detail() string {
	if f.Rule == "" {
		return f.Message
	}
	return f.Message + " [" + f.Rule + "]"
}

// MarshalJSON writes the finding as every command's --json reports one:
// {"level", "rule", "droplet", "field", "message"} (the last three but
// message left out when empty).
func (f Finding) MarshalJSON() ([]byte, error) {
	return jsontext.Marshal(struct {
		Level   string `json:"level"`
		Rule    string `json:"rule,omitempty"`
		Droplet string `json:"droplet,omitempty"`
		Field   string `json:"field,omitempty"`
		Message string `json:"message"`
	}{f.Severity.String(), f.Rule, f.Droplet, f.Field, f.Message})
}

// Error makes a finding an error (its text is String).
func (f Finding) Error() string { return f.String() }

// Unwrap returns Err.
func (f Finding) Unwrap() error { return f.Err }

// A CheckError is an invalid assembly: the findings of severity Error, in
// the report's order. errors.Is matches each finding's sentinel.
type CheckError struct {
	Findings []Finding
}

// Error is the finding's text when there is one, else a count and one
// finding per line.
func (e *CheckError) Error() string {
	if len(e.Findings) == 1 {
		return e.Findings[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "invalid assembly (%d errors):", len(e.Findings))
	for _, f := range e.Findings {
		b.WriteString("\n  " + f.String())
	}
	return b.String()
}

// Unwrap returns the findings, each an error.
func (e *CheckError) Unwrap() []error {
	errs := make([]error, len(e.Findings))
	for i, f := range e.Findings {
		errs[i] = f
	}
	return errs
}

// A Report is what Check learns about an assembly.
type Report struct {
	// Manifest is the parsed manifest.json; nil when it could not be read
	// or parsed.
	Manifest *Manifest
	// Findings lists everything found, ordered by droplet (the manifest as
	// a whole first), then field, then rule.
	Findings []Finding
	// Graph is the dependency graph (dependsOn and references) and Order
	// a deploy order; both nil when the assembly is invalid.
	Graph *Graph
	Order []string
}

// Errors returns the findings of severity Error.
func (r *Report) Errors() []Finding { return r.filter(func(s Severity) bool { return s == Error }) }

// Warnings returns the findings that do not fail the check: warnings and
// notes, which every command shows.
func (r *Report) Warnings() []Finding { return r.filter(func(s Severity) bool { return s != Error }) }

func (r *Report) filter(keep func(Severity) bool) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if keep(f.Severity) {
			out = append(out, f)
		}
	}
	return out
}

// A FileSet is the set of files an assembly holds, by archive name, with
// their sizes (negative when not known yet). signature.asc is never part
// of it: it is not attested, and no droplet may name it.
type FileSet struct {
	sizes  map[string]int64
	sorted []string
}

// NewFileSet returns an empty set.
func NewFileSet() *FileSet { return &FileSet{sizes: map[string]int64{}} }

// Add adds a file (signature.asc is left out).
func (s *FileSet) Add(name string, size int64) {
	if name == SignatureName {
		return
	}
	if _, ok := s.sizes[name]; !ok {
		s.sorted = nil
	}
	s.sizes[name] = size
}

// Has reports whether the set holds the file name.
func (s *FileSet) Has(name string) bool {
	_, ok := s.sizes[name]
	return ok
}

// size is the file's size, or -1.
func (s *FileSet) size(name string) int64 {
	if n, ok := s.sizes[name]; ok {
		return n
	}
	return -1
}

// HasDir reports whether at least one file lies under the folder name.
func (s *FileSet) HasDir(name string) bool {
	if s.sorted == nil {
		s.sorted = slices.Sorted(maps.Keys(s.sizes))
	}
	prefix := name + "/"
	i := sort.SearchStrings(s.sorted, prefix)
	return i < len(s.sorted) && strings.HasPrefix(s.sorted[i], prefix)
}

// FileSet returns the archive's files (all but signature.asc).
func (r *Reader) FileSet() *FileSet {
	s := NewFileSet()
	for _, f := range r.files {
		s.Add(f.Name(), f.Size())
	}
	return s
}

// Check decides whether an assembly is valid: it is the one verdict every
// command shares. manifest holds manifest.json's bytes, files the files the
// archive holds (see FileSet; the manifest is absent when files lacks
// manifest.json, and is not read when files says it is too large).
//
// It checks the manifest's JSON and schema, unknown keys, logical IDs, type
// specifiers, environments, the properties of the known droplet kinds,
// references (syntax, target droplet, attribute), dependency cycles, and
// that every path property names a file or folder inside the archive. The
// report lists every finding; the error, a *CheckError, is non-nil when
// any finding is an Error (under opts), and then the report's Manifest may
// be nil and its Graph is. Rules lists what each rule checks.
func Check(manifest []byte, files *FileSet, opts CheckOptions) (*Report, error) {
	if files == nil {
		files = NewFileSet()
	}
	c := &checker{opts: opts}
	rep := &Report{}
	switch size := files.size(ManifestName); {
	case !files.Has(ManifestName):
		c.add(ruleNoManifest, "", "", nil, "no %s in the archive", ManifestName)
	case size > MaxManifestSize || len(manifest) > MaxManifestSize:
		c.add(ruleTooLarge, "", "", nil, "%s of %d bytes, at most %d allowed", ManifestName, max(size, int64(len(manifest))), MaxManifestSize)
	default:
		if m := c.parse(manifest); m != nil {
			rep.Manifest = m
			c.validate(m, files, rep)
		}
	}
	return c.finish(rep)
}

// Check reads manifest.json from the archive and runs Check on it and the
// archive's files. It establishes no trust (package signing runs the same
// check on verified bytes); the verdict is the one Verify gives. Errors
// other than a *CheckError are I/O errors reading manifest.json.
func (r *Reader) Check(opts CheckOptions) (*Report, error) {
	var b []byte
	if f := r.File(ManifestName); f != nil && f.Size() <= MaxManifestSize {
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrFormat, ManifestName, err)
		}
		b, err = io.ReadAll(io.LimitReader(rc, MaxManifestSize+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrFormat, ManifestName, err)
		}
	}
	return Check(b, r.FileSet(), opts)
}

// Validate checks a manifest that is not in an archive yet (a build before
// its files are packaged): everything Check does but the path properties,
// which name project files at that stage. What it finds, Check finds too.
func (m *Manifest) Validate(opts CheckOptions) (*Report, error) {
	c := &checker{opts: opts}
	rep := &Report{Manifest: m}
	c.validate(m, nil, rep)
	return c.finish(rep)
}

// checker collects findings.
type checker struct {
	opts     CheckOptions
	findings []Finding
}

// add records a finding of rule at droplet and field. cause, when not nil,
// is wrapped too (a *SyntaxError, an *EnvironmentError, ...).
func (c *checker) add(r *Rule, droplet, field string, cause error, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	f := Finding{Severity: r.Severity(c.opts), Rule: r.Code, Droplet: droplet, Field: field, Message: msg}
	if r.Sentinel != nil {
		f.Err = &ruleError{msg: msg, sentinel: r.Sentinel, cause: cause}
	}
	c.findings = append(c.findings, f)
}

// failed reports whether an Error was found.
func (c *checker) failed() bool {
	for _, f := range c.findings {
		if f.Severity == Error {
			return true
		}
	}
	return false
}

func (c *checker) finish(rep *Report) (*Report, error) {
	sort.SliceStable(c.findings, func(i, j int) bool {
		a, b := c.findings[i], c.findings[j]
		if a.Droplet != b.Droplet {
			return a.Droplet < b.Droplet
		}
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		return a.Rule < b.Rule
	})
	rep.Findings = c.findings
	if errs := rep.Errors(); len(errs) > 0 {
		rep.Graph, rep.Order = nil, nil
		return rep, &CheckError{Findings: errs}
	}
	return rep, nil
}

// ruleError is a finding's Err: its message, matching the rule's sentinel,
// ErrManifest and the cause.
type ruleError struct {
	msg      string
	sentinel error
	cause    error
}

func (e *ruleError) Error() string { return e.msg }
func (e *ruleError) Unwrap() []error {
	errs := []error{e.sentinel, ErrManifest}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

// A Placement puts a file of an assembly at a path when it is extracted:
// Name is the file in the archive, Path its slash path below the folder
// written, Executable whether it is written executable.
type Placement struct {
	Name, Path string
	Executable bool
}
