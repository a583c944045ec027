package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// atomicFile is an output file written under a temporary name beside its
// destination and renamed into place by Commit, so that a failed command
// never leaves a partial file behind.
type atomicFile struct {
	*os.File
	dest string
	done bool
}

// createAtomic opens a temporary file in dest's directory.
func createAtomic(dest string) (*atomicFile, error) {
	f, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", dest, err)
	}
	if err := f.Chmod(0o644); err != nil { // CreateTemp makes 0600; outputs are ordinary files
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("creating %s: %w", dest, err)
	}
	return &atomicFile{File: f, dest: dest}, nil
}

// Commit flushes the file to disk and renames it to its destination.
func (f *atomicFile) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		os.Remove(f.File.Name())
		return fmt.Errorf("writing %s: %w", f.dest, err)
	}
	if err := f.File.Close(); err != nil {
		os.Remove(f.File.Name())
		return fmt.Errorf("writing %s: %w", f.dest, err)
	}
	if err := os.Rename(f.File.Name(), f.dest); err != nil {
		os.Remove(f.File.Name())
		return fmt.Errorf("writing %s: %w", f.dest, err)
	}
	return nil
}

// Abort removes the temporary file unless Commit succeeded; safe to defer.
func (f *atomicFile) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
}
