package blueprint

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/projectfs"
	"github.com/cloud-assembly/assemble/internal/yamlpos"
)

// Version is the only specification version this package accepts.
const Version = "2023-04-20"

// MaxFileSize bounds the size of one blueprint file.
const MaxFileSize = 4 << 20

// MaxDepth is the deepest chain of blueprints includes may form: the root
// blueprint is at depth 1, a blueprint it includes at depth 2, and so on.
const MaxDepth = 5

// MaxBlueprints bounds how many blueprint files one Load reads, includes
// counted (a blueprint may include the same file under many names).
const MaxBlueprints = 256

// MaxNodes bounds the YAML nodes of the blueprint files one Load reads,
// includes counted: every node is held until packaging has written it, and
// yaml.v3's encoder keeps an event for every node it writes (a 3.8 MB flat
// list took 2.7 GB to package). 131,072 nodes is some 2,500 resources of
// twenty fields. One file holding more is refused before it is decoded
// (yamlpos.CheckNodes, the same number).
const MaxNodes = yamlpos.MaxNodes

// countNodes counts the nodes of the tree n, stopping past limit.
func countNodes(n *yaml.Node, limit int) int {
	count := 0
	stack := []*yaml.Node{n}
	for len(stack) > 0 && count <= limit {
		top := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], top.Content...)
		count++
	}
	return count
}

// readFile reads a file of at most MaxFileSize bytes.
func readFile(path string) ([]byte, error) {
	f, err := projectfs.OpenFile(path) // a regular file; a FIFO is not waited on
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(path, f)
}

// readLimited reads the file path from r, at most MaxFileSize bytes.
func readLimited(path string, r io.Reader) ([]byte, error) {
	b, err := limitio.ReadAll(r, MaxFileSize)
	var tl *limitio.TooLargeError
	if errors.As(err, &tl) {
		return nil, &Error{File: path, Err: ErrTooLarge, Msg: fmt.Sprintf("file is larger than %d bytes; split it into included blueprints", MaxFileSize)}
	}
	return b, err
}

// parseDocument parses YAML or JSON source into its top-level mapping node.
func parseDocument(file string, src []byte, requireMapping bool) (*yaml.Node, *Error) {
	// yaml.v3 keeps a node for every value: bound them before it runs.
	if le := yamlpos.CheckNodes(src); le != nil {
		return nil, &Error{File: file, Line: le.Pos.Line, Column: le.Pos.Column, Err: ErrTooLarge, Msg: le.Reason()}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Err: ErrSyntax, Msg: "empty file: a blueprint needs at least version and resources"}
		}
		pos, msg := yamlpos.Locate(src, err)
		e := &Error{File: file, Line: max(pos.Line, 1), Column: max(pos.Column, 1), Err: ErrSyntax, Msg: "not valid YAML or JSON: " + msg}
		return nil, e
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: file, Line: extra.Line, Column: extra.Column, Err: ErrSyntax, Msg: "more than one YAML document; a blueprint is one document"}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: file, Err: ErrSyntax, Msg: "empty file: a blueprint needs at least version and resources"}
	}
	root := doc.Content[0]
	if !requireMapping {
		return root, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: root.Line, Column: root.Column, Err: ErrSchema, Msg: "a blueprint must be a mapping with version and resources"}
	}
	return root, nil
}
