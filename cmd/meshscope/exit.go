package main

import "errors"

// exitError carries a process exit code out of a command without printing
// anything more: explain and doctor use exit 1 to mean "found a problem",
// which is a result, not an error message.
type exitError struct{ code int }

func (e exitError) Error() string { return "exit status" }

// exitWith returns an error that makes meshscope exit with code, silently.
func exitWith(code int) error { return exitError{code: code} }

func exitCode(err error) (int, bool) {
	var e exitError
	if errors.As(err, &e) {
		return e.code, true
	}
	return 0, false
}
