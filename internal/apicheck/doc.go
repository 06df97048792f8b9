// Package apicheck holds the module's check that every exported name is
// used outside its package or unexported (issue 25): its test type-checks
// every package of the module (imports from the compiler's export data, as
// `go list -export` gives it) and lists the exported top-level functions,
// types, variables, constants and methods of each non-main package that no
// other package uses. Run it alone with
//
//	go test ./internal/apicheck/ -run Exported -v
//
// The rule, and what counts as a use, is in exported_test.go.
package apicheck
