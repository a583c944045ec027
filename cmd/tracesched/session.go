package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// session is what one run of Main owns beyond its streams: the temporary
// files it has created (hidden atomic outputs, a spooled standard input),
// removed when the run ends however it ends, and the copy of standard input
// that lets several passes read "-".
//
// It travels in the command's context (see withSession), so that the code
// that creates a temporary file and the code that cleans up after a signal
// share it without process-wide state.
type session struct {
	mu    sync.Mutex
	temps map[string]struct{}
	// stdin is the process's standard input; spool is the temporary copy
	// made the first time "-" is opened, or "" before that.
	stdin io.Reader
	spool string
	// ownSignals is set by a command that handles SIGINT and SIGTERM
	// itself (record: it must restore tracefs however long that takes), so
	// the run is neither cancelled nor ended by the signal.
	ownSignals bool
}

// takeSignals says that the running command handles SIGINT and SIGTERM
// itself from now on.
func (s *session) takeSignals() {
	s.mu.Lock()
	s.ownSignals = true
	s.mu.Unlock()
}

// signalsTaken reports whether the command handles signals itself.
func (s *session) signalsTaken() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ownSignals
}

type sessionKey struct{}

// withSession returns ctx carrying a new session reading stdin.
func withSession(ctx context.Context, stdin io.Reader) (context.Context, *session) {
	s := &session{temps: make(map[string]struct{}), stdin: stdin}
	return context.WithValue(ctx, sessionKey{}, s), s
}

// sessionOf returns ctx's session; a context without one (a test calling a
// command function directly) gets a fresh session reading os.Stdin, whose
// temporary files are still removed by Abort and Commit.
func sessionOf(ctx context.Context) *session {
	if s, ok := ctx.Value(sessionKey{}).(*session); ok {
		return s
	}
	return &session{temps: make(map[string]struct{}), stdin: os.Stdin}
}

// track records a temporary file to remove at cleanup.
func (s *session) track(name string) {
	s.mu.Lock()
	s.temps[name] = struct{}{}
	s.mu.Unlock()
}

// untrack forgets a temporary file that was renamed into place or removed.
func (s *session) untrack(name string) {
	s.mu.Lock()
	delete(s.temps, name)
	s.mu.Unlock()
}

// cleanup removes every temporary file still tracked. Safe to call more
// than once and from another goroutine (the signal path).
func (s *session) cleanup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.temps {
		os.Remove(name)
		delete(s.temps, name)
	}
}

// stdinPath returns the path of a file holding all of standard input,
// copying it there on the first call, so that commands that read their
// INPUT more than once can read "-" like a file. The copy is removed at
// cleanup.
func (s *session) stdinPath(ctx context.Context) (string, error) {
	s.mu.Lock()
	spool := s.spool
	s.mu.Unlock()
	if spool != "" {
		return spool, nil
	}
	f, err := os.CreateTemp("", ".tracesched-stdin-*") // $TMPDIR
	if err != nil {
		return "", fmt.Errorf("standard input: spooling to a temporary file: %w", err)
	}
	s.track(f.Name())
	_, err = io.Copy(f, ctxReader{ctx, s.stdin})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		s.untrack(f.Name())
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("standard input: spooling to %s: %w", f.Name(), err)
	}
	s.mu.Lock()
	s.spool = f.Name()
	s.mu.Unlock()
	return f.Name(), nil
}

// ctxReader is an io.Reader that fails with ctx's error once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// signalError is the cause of a run's cancellation by a signal.
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string {
	switch e.sig {
	case syscall.SIGINT:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "interrupted (SIGTERM)"
	}
	return "interrupted (" + e.sig.String() + ")"
}

// exitStatus is the conventional status of a process ended by the signal:
// 128 plus its number (130 for SIGINT, 143 for SIGTERM).
func (e *signalError) exitStatus() exitCode { return exitCode(128 + int(e.sig)) }

// interrupted reports the signal that cancelled ctx, if one did.
func interrupted(ctx context.Context) (*signalError, bool) {
	var se *signalError
	if errors.As(context.Cause(ctx), &se) {
		return se, true
	}
	return nil, false
}

// gracePeriod is how long a run may take to stop on its own after a signal
// before it is ended with its temporary files removed.
const gracePeriod = 3 * time.Second
