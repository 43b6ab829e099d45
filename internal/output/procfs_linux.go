package output

import "golang.org/x/sys/unix"

// onProcfs reports whether dir lies on procfs, whose symbolic links
// (/proc/self/fd/N) stand for open descriptors, not paths.
func onProcfs(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.PROC_SUPER_MAGIC
}
