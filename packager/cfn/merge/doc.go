// Package merge implements Fn::Merge, the packaging-time intrinsic of
// CloudFormation local modules that combines several objects or lists.
//
//	Tags:
//	  Fn::Merge:
//	    - !Ref Tags
//	    - {Team: platform}
//
// # Semantics
//
// The argument is a list. Its elements must be all objects or all lists
// (null elements, such as a removed AWS::NoValue, are skipped):
//
//   - Objects are merged left to right, recursively: where two objects hold
//     the same key, two objects are merged, two lists are concatenated, and
//     anything else is replaced by the later value ("later wins"). Keys keep
//     the position where they first appeared; new keys follow in order.
//   - Lists are concatenated in order; duplicates are kept.
//
// An intrinsic function call inside the data (a !Ref in a tag value, say) is
// copied as a value: it is never merged key by key with another one. An
// argument that is itself an unresolved intrinsic (a !Ref to a parent
// parameter) cannot be merged at packaging time: Merge reports ErrUnresolved.
//
// The result shares no node with the argument; line numbers of copied nodes
// are kept, so later errors still point into the source.
package merge
