package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// atomicFile is an output named by the user (-o, --events, ...).
//
// A regular file, or a path that does not exist yet, is written under a
// hidden temporary name beside its destination and renamed into place by
// Commit, so that a failed or interrupted command never leaves a partial
// file behind and an existing file is replaced whole or not at all.
//
// Anything else is written in place and never replaced: "-" is standard
// output; a character or block device (/dev/null, /dev/full), a FIFO or a
// socket is opened for writing as it is; so is a path reached through the
// magic links of /dev and /proc (/dev/stdout, /dev/fd/3, /proc/self/fd/1),
// whose target may be a terminal, a pipe or a file some other process holds
// open. A symbolic link elsewhere to a regular file is followed: the file it
// names is replaced atomically and the link is kept.
type atomicFile struct {
	io.Writer
	dest string
	// f is the open file; nil for standard output.
	f *os.File
	// tmp is the temporary file's name ("" when written in place).
	tmp  string
	sess *session
	// ctx is the run's context: an interrupted run commits nothing.
	ctx  context.Context
	done bool
}

// createAtomic opens dest for writing as atomicFile describes; ios.Out is
// standard output for "-". Temporary files are tracked in ctx's session,
// so an interrupted run removes them.
func createAtomic(ctx context.Context, ios *IOStreams, dest string) (*atomicFile, error) {
	sess := sessionOf(ctx)
	if dest == "-" {
		return &atomicFile{Writer: ios.Out, dest: "standard output", sess: sess}, nil
	}
	target, inPlace, mode, err := outputTarget(dest)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", dest, err)
	}
	if inPlace {
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, fmt.Errorf("creating %s: %w", dest, err)
		}
		return &atomicFile{Writer: f, dest: dest, f: f, sess: sess}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", dest, err)
	}
	sess.track(f.Name())
	if err := f.Chmod(mode); err != nil { // CreateTemp makes 0600; outputs are ordinary files
		f.Close()
		os.Remove(f.Name())
		sess.untrack(f.Name())
		return nil, fmt.Errorf("creating %s: %w", dest, err)
	}
	return &atomicFile{Writer: f, dest: target, f: f, tmp: f.Name(), sess: sess, ctx: ctx}, nil
}

// outputTarget decides how dest is written: the path to open or rename
// onto, whether it is written in place, and the permissions of a replaced
// file (0644 for a new one, an existing file's own otherwise).
func outputTarget(dest string) (target string, inPlace bool, mode os.FileMode, err error) {
	mode = 0o644
	li, err := os.Lstat(dest)
	if os.IsNotExist(err) {
		return dest, false, mode, nil
	}
	if err != nil {
		return "", false, 0, err
	}
	if li.Mode()&os.ModeSymlink != 0 {
		abs, err := filepath.Abs(dest)
		if err != nil {
			return "", false, 0, err
		}
		if underMagicLinks(abs) {
			return dest, true, mode, nil
		}
		resolved, err := filepath.EvalSymlinks(dest)
		if os.IsNotExist(err) {
			return dest, true, mode, nil // a dangling link: create what it names
		}
		if err != nil {
			return "", false, 0, err
		}
		if underMagicLinks(resolved) {
			return dest, true, mode, nil
		}
		return outputTarget(resolved)
	}
	if !li.Mode().IsRegular() {
		if li.IsDir() {
			return "", false, 0, fmt.Errorf("is a directory")
		}
		return dest, true, mode, nil
	}
	return dest, false, li.Mode().Perm(), nil
}

// underMagicLinks reports whether path lies under /dev or /proc, whose
// links name open files (or devices) rather than paths to replace.
func underMagicLinks(path string) bool {
	return path == "/dev" || path == "/proc" || strings.HasPrefix(path, "/dev/") || strings.HasPrefix(path, "/proc/")
}

// Commit makes the output final: a temporary file is flushed to disk and
// renamed to its destination; a file written in place is closed. Once the
// run's context is done (a signal), Commit removes the temporary file and
// returns the context's error instead.
func (f *atomicFile) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.f == nil { // standard output: errors surface where Main checks it
		return nil
	}
	if f.tmp == "" {
		if err := f.f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", f.dest, err)
		}
		return nil
	}
	defer f.sess.untrack(f.tmp)
	if err := f.ctx.Err(); err != nil {
		f.f.Close()
		os.Remove(f.tmp)
		return err
	}
	if err := f.f.Sync(); err != nil {
		f.f.Close()
		os.Remove(f.tmp)
		return fmt.Errorf("writing %s: %w", f.dest, err)
	}
	if err := f.f.Close(); err != nil {
		os.Remove(f.tmp)
		return fmt.Errorf("writing %s: %w", f.dest, err)
	}
	if err := os.Rename(f.tmp, f.dest); err != nil {
		os.Remove(f.tmp)
		return fmt.Errorf("writing %s: %w", f.dest, err)
	}
	return nil
}

// Abort removes the temporary file unless Commit succeeded; safe to defer.
// A file written in place is closed with what was written so far (a device
// or pipe cannot take it back).
func (f *atomicFile) Abort() {
	if f.done {
		return
	}
	f.done = true
	if f.f == nil {
		return
	}
	f.f.Close()
	if f.tmp != "" {
		os.Remove(f.tmp)
		f.sess.untrack(f.tmp)
	}
}
