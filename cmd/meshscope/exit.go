package main

import "errors"

// exitError carries a process exit code out of a command: explain and
// doctor use exit 1 to mean "found a problem", which is a result, not an
// error message (err nil: nothing more is printed); what-if exits 2 on
// changes it cannot read, with the message (err).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return "exit status"
}

func (e exitError) Unwrap() error { return e.err }

// exitWith returns an error that makes meshscope exit with code, silently.
func exitWith(code int) error { return exitError{code: code} }

// exitWithError returns an error that makes meshscope print err and exit
// with code.
func exitWithError(code int, err error) error { return exitError{code: code, err: err} }

// exitCode is the code err asks for, and the message to print ("" for
// none); ok is false for an ordinary error.
func exitCode(err error) (code int, msg string, ok bool) {
	var e exitError
	if errors.As(err, &e) {
		if e.err != nil {
			msg = e.err.Error()
		}
		return e.code, msg, true
	}
	return 0, "", false
}
