//go:build !unix

package projectfs

// nonBlock: no FIFOs to wait on here.
const nonBlock = 0
