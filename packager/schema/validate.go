package schema

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/projectfs"
)

// Limits on untrusted input.
const (
	// MaxFileSize is the largest schema file Validate reads.
	MaxFileSize = 8 << 20
	// MaxSchemaSize is the registration limit for a resource type schema,
	// measured on its minified JSON.
	MaxSchemaSize = 60 << 10
	// regexTimeout bounds one ECMAScript regular expression match.
	regexTimeout = time.Second
)

// Sentinel errors.
var (
	// ErrInvalid is wrapped by every error that reports an invalid schema.
	ErrInvalid = errcode.New("invalid_schema", "invalid resource type schema",
		"fix the schema at the place shown")
	// ErrTooLarge is returned for a file above MaxFileSize.
	ErrTooLarge = errcode.New("schema_too_large", "file too large",
		"the schema is larger than assemble reads")
)

//go:embed metaschema/*.json
var metaFS embed.FS

const metaBase = "https://schema.cloudformation.us-east-1.amazonaws.com/"

// metaFiles maps each embedded file to the URL other files refer to it by.
var metaFiles = []struct{ file, url string }{
	{"base.definition.schema.v1.json", metaBase + "base.definition.schema.v1.json"},
	{"provider.configuration.definition.schema.v1.json", metaBase + "provider.configuration.definition.schema.v1.json"},
	{"provider.definition.schema.v1.json", metaBase + "provider.definition.schema.v1.json"},
	{"provider.configuration.definition.schema.hooks.v1.json", metaBase + "provider.configuration.definition.schema.hooks.v1.json"},
	{"provider.definition.schema.hooks.v1.json", metaBase + "provider.definition.schema.hooks.v1.json"},
}

// Issue is one finding: a JSON pointer into the schema (empty or "/" for
// the whole document) and a message.
type Issue struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (i Issue) String() string {
	p := i.Path
	if p == "" {
		p = "/"
	}
	return p + ": " + i.Message
}

// Result is the verdict for one schema file.
type Result struct {
	File     string  `json:"file"`
	Valid    bool    `json:"valid"`
	Errors   []Issue `json:"errors"`
	Warnings []Issue `json:"warnings"`
}

// Err returns nil for a valid schema, else an error wrapping ErrInvalid
// that names the file and its first error.
func (r *Result) Err() error {
	if r.Valid {
		return nil
	}
	if len(r.Errors) == 0 {
		return fmt.Errorf("%s: %w", r.File, ErrInvalid)
	}
	return fmt.Errorf("%s: %s: %w", r.File, r.Errors[0], ErrInvalid)
}

// Validator validates resource type schemas. It is safe for concurrent use.
type Validator struct {
	meta   *jsonschema.Schema
	hook   *jsonschema.Schema
	strict bool
	regex  *RegexBudget // nil: DefaultRegexBudget for each Validate
}

// Strict returns a copy of v that also reports JSON pointers in
// primaryIdentifier, additionalIdentifiers and the property lists that do
// not resolve to a defined property as errors. By default they are
// warnings, as in the reference tools: published AWS schemas contain them.
// So are the two checks cloudformation-resource-schema makes beyond the
// specification and cloudformation-cli: tagUpdatable true without an update
// handler, and the deprecated taggable beside tagging.
func (v *Validator) Strict() *Validator {
	c := *v
	c.strict = true
	return &c
}

// WithRegexBudget returns a copy of v whose validations all take their
// regular expression matches (patternProperties against the pointers of the
// property lists) out of b: one budget for a command that validates many
// files. Without it each Validate has DefaultRegexBudget.
func (v *Validator) WithRegexBudget(b *RegexBudget) *Validator {
	c := *v
	c.regex = b
	return &c
}

var (
	defaultOnce sync.Once
	defaultV    *Validator
	defaultErr  error
)

// DefaultValidator returns a process-wide Validator, compiling the embedded
// meta-schema on first use.
func DefaultValidator() (*Validator, error) {
	defaultOnce.Do(func() { defaultV, defaultErr = NewValidator() })
	return defaultV, defaultErr
}

// NewValidator compiles the embedded meta-schema.
func NewValidator() (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	// The meta-schema's own patterns must compile. Once it is compiled the
	// engine only serves format "regex" on the schema under validation,
	// where an uncompilable pattern is a warning (as in the reference CLI),
	// reported by lint, not a meta-schema error.
	var compiled atomic.Bool
	c.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) {
		if !compiled.Load() {
			return trustedCompile(s)
		}
		re, err := ecmaCompile(s)
		if err != nil {
			return neverMatch(s), nil
		}
		return re, nil
	})
	c.UseLoader(noLoader{})
	for _, m := range metaFiles {
		b, err := metaFS.ReadFile("metaschema/" + m.file)
		if err != nil {
			return nil, fmt.Errorf("embedded meta-schema: %w", err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("embedded meta-schema %s: %w", m.file, err)
		}
		if err := c.AddResource(m.url, doc); err != nil {
			return nil, fmt.Errorf("embedded meta-schema %s: %w", m.file, err)
		}
	}
	s, err := c.Compile(metaBase + "provider.definition.schema.v1.json")
	if err != nil {
		return nil, fmt.Errorf("compile meta-schema: %w", err)
	}
	h, err := c.Compile(metaBase + "provider.definition.schema.hooks.v1.json")
	if err != nil {
		return nil, fmt.Errorf("compile hook meta-schema: %w", err)
	}
	compiled.Store(true)
	return &Validator{meta: s, hook: h}, nil
}

// neverMatch stands in for a pattern that does not compile.
type neverMatch string

func (n neverMatch) MatchString(string) bool { return false }
func (n neverMatch) String() string          { return string(n) }

// noLoader refuses every URL that is not embedded: validation never uses
// the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is not embedded and is never fetched", url)
}

// ecmaRegexp adapts regexp2 (ECMAScript mode) to jsonschema.Regexp.
type ecmaRegexp struct{ re *regexp2.Regexp }

func (r ecmaRegexp) MatchString(s string) bool { return matchECMA(r.re, s) }

func (r ecmaRegexp) String() string { return r.re.String() }

func ecmaCompile(s string) (jsonschema.Regexp, error) {
	re, err := compileECMA(s)
	if err != nil {
		return nil, err
	}
	return ecmaRegexp{re}, nil
}

// trustedCompile compiles a pattern of the embedded meta-schema. These are
// matched against every property name of every schema, so they must never
// time out under load: RE2 when it can (linear time), else regexp2 without
// a timeout (only the lookahead in provider.configuration needs it).
func trustedCompile(s string) (jsonschema.Regexp, error) {
	if re, err := regexp.Compile(s); err == nil {
		return re, nil
	}
	re, err := regexp2.Compile(s, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	return ecmaRegexp{re}, nil
}

// compileECMA compiles an ECMA-262 regular expression with a match timeout.
// UTF-16 surrogate pairs written as escapes (\uD83D\uDE00) are joined into
// the code point they encode, as ECMAScript's unicode mode reads them.
func compileECMA(s string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(joinSurrogates(s), regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = regexTimeout
	return re, nil
}

// matchECMA reports whether re matches s; a match that times out counts as
// no match. regexp2 enforces MatchTimeout with a shared clock goroutine that,
// starved on a loaded machine, can jump forward and fail a match that has
// barely started, so a timeout that fires long before the budget really
// elapsed is retried; a genuine one is not.
func matchECMA(re *regexp2.Regexp, s string) bool {
	for attempt := 0; ; attempt++ {
		start := time.Now()
		ok, err := re.MatchString(s)
		if err == nil {
			return ok
		}
		if attempt == 3 || time.Since(start) >= re.MatchTimeout/2 {
			return false
		}
	}
}

// ValidateFile reads and validates the schema at path.
func (v *Validator) ValidateFile(path string) Result {
	data, err := readBounded(path)
	if err != nil {
		return Result{File: path, Errors: []Issue{{Path: "", Message: err.Error()}}, Warnings: []Issue{}}
	}
	return v.Validate(path, data)
}

// ValidateFiles validates the files in parallel (workers <= 0 means one per
// CPU) and returns the results in the order of files.
func (v *Validator) ValidateFiles(files []string, workers int) []Result {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]Result, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers && w < len(files); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = v.ValidateFile(files[i])
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// readBounded reads a schema file named on the command line or found in a
// catalog folder: a regular file (a FIFO is refused, not waited on), at
// most MaxFileSize bytes.
func readBounded(path string) ([]byte, error) {
	f, err := projectfs.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := limitio.ReadAll(f, MaxFileSize)
	var tl *limitio.TooLargeError
	if errors.As(err, &tl) {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxFileSize)
	}
	return b, err
}

// Validate validates one schema document. file names it in the result and
// locates relative $refs (empty: relative $refs cannot be checked).
func (v *Validator) Validate(file string, data []byte) Result {
	r := Result{File: file, Errors: []Issue{}, Warnings: []Issue{}}
	doc, err := decodeJSON(data)
	if err != nil {
		r.Errors = append(r.Errors, Issue{Message: err.Error()})
		return r
	}
	root, isObj := doc.(map[string]any)
	hook := isObj && isHook(root)
	meta := v.meta
	if hook {
		meta = v.hook
	}
	if err := meta.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			r.Errors = append(r.Errors, flatten(ve)...)
		} else {
			r.Errors = append(r.Errors, Issue{Message: err.Error()})
		}
	}
	if isObj {
		c := &checker{file: file, strict: v.strict, root: root, res: &r, regex: v.regex}
		defer c.close()
		if hook {
			c.hookRules(data)
		} else {
			c.semantic(data)
			c.lint()
		}
	}
	r.Valid = len(r.Errors) == 0
	return r
}

// isHook reports whether a schema describes a hook type rather than a
// resource type: it has no properties, and a typeConfiguration or pre*
// handlers (the hook meta-schema's required shape).
func isHook(root map[string]any) bool {
	if _, ok := root["properties"]; ok {
		return false
	}
	if _, ok := root["typeConfiguration"]; ok {
		return true
	}
	h, _ := root["handlers"].(map[string]any)
	for _, k := range []string{"preCreate", "preUpdate", "preDelete"} {
		if _, ok := h[k]; ok {
			return true
		}
	}
	return false
}

// decodeJSON parses one JSON value, numbers kept exact, and reports syntax
// errors with line:col.
func decodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, jsonError(data, d, err)
	}
	if _, err := d.Token(); err != io.EOF {
		line, col := lineCol(data, int(d.InputOffset()))
		return nil, fmt.Errorf("line %d:%d: unexpected data after the JSON document; a schema file holds one JSON object", line, col)
	}
	return v, nil
}

func jsonError(data []byte, d *json.Decoder, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int(d.InputOffset())
	switch {
	case errors.As(err, &se):
		off = int(se.Offset) - 1 // Offset counts the offending byte
		if off < 0 {
			off = 0
		}
	case errors.As(err, &te):
		off = int(te.Offset)
	case errors.Is(err, io.EOF):
		return errors.New("empty file: a resource type schema is a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = len(data)
	}
	line, col := lineCol(data, off)
	return fmt.Errorf("line %d:%d: invalid JSON: %v", line, col, err)
}

// lineCol converts a byte offset to a 1-based line and column.
func lineCol(data []byte, off int) (int, int) {
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

var printer = message.NewPrinter(language.English)

// propertiesWithPatternProperties ends the location of the meta-schema's
// dependency whose bare "not" forbids patternProperties beside properties.
const propertiesWithPatternProperties = "base.definition.schema.v1.json#/definitions/validations/dependencies/properties"

// flatten turns a validation error tree into its leaves, sorted by path.
func flatten(ve *jsonschema.ValidationError) []Issue {
	var out []Issue
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
				sort.Strings(ap.Properties) // the validator lists them in map order
			}
			is := Issue{Path: pointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(printer)}
			if _, ok := e.ErrorKind.(*kind.Not); ok && strings.HasSuffix(e.SchemaURL, propertiesWithPatternProperties) {
				is.Message = "properties and patternProperties can not be used together in one shape: a shape has either defined or undefined properties; move the undefined ones into a subshape"
			}
			if k := is.Path + "\x00" + is.Message; !seen[k] {
				seen[k] = true
				out = append(out, is)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// pointer renders path segments as a JSON pointer.
func pointer(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		s = strings.ReplaceAll(s, "~", "~0")
		b.WriteString(strings.ReplaceAll(s, "/", "~1"))
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// numberString renders an index for a pointer.
func idx(i int) string { return strconv.Itoa(i) }

// joinSurrogates replaces each escaped UTF-16 surrogate pair in a pattern
// with the literal character it encodes.
func joinSurrogates(s string) string {
	if !strings.Contains(s, `\u`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] != 'u' {
			b.WriteString(s[i : i+2]) // keep other escapes, including \\
			i++
			continue
		}
		if hi, ok := hex4(s, i); ok && utf16.IsSurrogate(rune(hi)) && hi < 0xDC00 {
			if lo, ok := hex4(s, i+6); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				b.WriteRune(utf16.DecodeRune(rune(hi), rune(lo)))
				i += 11
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hex4 parses a \uXXXX escape at s[i:].
func hex4(s string, i int) (int, bool) {
	if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(s[i+2:i+6], 16, 32)
	return int(n), err == nil
}
