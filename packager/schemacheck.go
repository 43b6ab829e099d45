package packager

import (
	"fmt"
	"os"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/packager/schema"
)

// ErrSchemaCheck: a packaged template does not match the resource type
// schemas given with BuildOptions.Schemas.
var ErrSchemaCheck = errcode.New("schema_check", "template does not match the resource type schemas",
	"fix the template where the schema check says, or make these warnings with BuildOptions.SchemasWarn")

// SchemaCheckError lists every finding of the schema check, each with the
// template file, line and column.
type SchemaCheckError struct {
	Findings []schema.Finding
}

func (e *SchemaCheckError) Error() string {
	var b strings.Builder
	noun := "problems"
	if len(e.Findings) == 1 {
		noun = "problem"
	}
	fmt.Fprintf(&b, "%d template %s against the resource type schemas:", len(e.Findings), noun)
	for _, f := range e.Findings {
		b.WriteString("\n  ")
		b.WriteString(f.String())
	}
	return b.String()
}

func (e *SchemaCheckError) Unwrap() error { return ErrSchemaCheck }

// checkSchemas checks one packaged template against opts.Schemas. The
// findings name file, the template as the project names it, and lines in
// it (or in the local module a resource came from); see
// schema.Catalog.CheckPackaged.
func (b *builder) checkSchemas(id, field, file, real string, body []byte) error {
	if b.opts.Schemas == nil {
		return nil
	}
	source, err := os.ReadFile(real)
	if err != nil {
		return err
	}
	found, err := b.opts.Schemas.CheckPackaged(file, source, body)
	if err != nil {
		// The check could not be finished (the schemas' patterns took
		// their whole time): an error, even with SchemasWarn.
		return err
	}
	for _, f := range found {
		if b.opts.SchemasWarn {
			b.schemaWarnings = append(b.schemaWarnings, assembly.Finding{Severity: assembly.Warning, Droplet: id, Field: field, Message: f.String()})
			continue
		}
		b.schemaFindings = append(b.schemaFindings, f)
	}
	return nil
}

// schemaError returns the findings as one error, or nil.
func (b *builder) schemaError() error {
	if len(b.schemaFindings) == 0 {
		return nil
	}
	return &SchemaCheckError{Findings: b.schemaFindings}
}
