//go:build !linux

package output

import "strings"

// onProcfs reports whether dir holds descriptor links (/dev/fd on the BSDs
// and macOS), which are not paths.
func onProcfs(dir string) bool {
	return dir == "/dev/fd" || strings.HasPrefix(dir, "/proc/")
}
