package cfn

import (
	yaml "go.yaml.in/yaml/v3"
)

// room returns the node bytes left under maxExpansionBytes.
func (e *engine) room() int64 { return maxExpansionBytes - e.expansion }

// fits reports whether size more bytes stay under maxExpansionBytes (for
// the functions that check a result's size before they build it).
func (e *engine) fits(size int64) bool { return size <= e.room() }

// tooLarge is the error for a step that would take the expansion past
// maxExpansionBytes, placed at the call (or entry) at.
func (sc *scope) tooLarge(at *yaml.Node, what string) error {
	return sc.errorf(at, ErrTooLarge, "%s would take the packaged template past %d MiB (parsed files, module instances and what functions and ForEach produce, counted in node bytes), far beyond the 1 MB CloudFormation accepts; ship large content as a file (an artifact in S3) rather than inline, and repeat less", what, maxExpansionBytes>>20)
}

// produced counts the result r of the function call call (or, with call
// nil, of a ForEach copy at at), named what, against maxExpansionBytes:
// every node (nodeCost) and every byte of its values, failing at the first
// node past the bound. What the call itself took when its file was parsed
// (or its module instanced) is taken off, as r replaces it in the output:
// a Ref or an Fn::GetAtt costs nothing more, a Ref to a 1 MB parameter
// value costs that value each time. Only the call's own nodes are taken
// off, not those of the calls inside it, which their own results replaced.
// A result of an earlier call that r holds was counted then and is not
// counted again (once: a second copy of it in r is counted, so a result
// that shares a node many times counts as the output it writes); r then
// stands for all it holds. The count never goes down.
func (sc *scope) produced(call, at *yaml.Node, what string, r *yaml.Node) error {
	e := sc.e
	if e.counted == nil {
		e.counted = map[*yaml.Node]struct{}{}
	}
	allowance := int64(0)
	if call != nil {
		allowance = ownSize(call, true)
	}
	before := e.expansion
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		if _, ok := e.counted[n]; ok {
			delete(e.counted, n)
			return true
		}
		if e.expansion += nodeCost + int64(len(n.Value)); e.expansion-allowance > maxExpansionBytes {
			return false
		}
		for _, c := range n.Content {
			if !walk(c) {
				return false
			}
		}
		return true
	}
	if !walk(r) {
		e.expansion = before
		return sc.tooLarge(at, what)
	}
	e.expansion = max(before, e.expansion-allowance)
	e.counted[r] = struct{}{}
	return nil
}

// ownSize is what the parsed nodes of a function call take, without the
// function calls inside it (top: n is the call itself).
func ownSize(n *yaml.Node, top bool) int64 {
	if !top {
		if k, _, ok := single(n); ok && intrinsics[k] != nil {
			return 0
		}
	}
	s := nodeCost + int64(len(n.Value))
	for _, c := range n.Content {
		s += ownSize(c, false)
	}
	return s
}
