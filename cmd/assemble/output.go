package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeFileAtomic writes data to name through a temporary file in the same
// folder and a rename, so name is never half-written.
func writeFileAtomic(name string, data []byte) (err error) {
	// Renaming over a folder fails obscurely, and over a device or a pipe
	// (-o /dev/stdout) it would replace the special file.
	if st, err := os.Stat(name); err == nil && !st.Mode().IsRegular() {
		what := "a special file"
		if st.IsDir() {
			what = "a folder"
		}
		return fmt.Errorf("write %s: %s is %s: name the file to write, or leave out -o to print to standard output", name, name, what)
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
