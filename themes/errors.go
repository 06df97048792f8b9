package themes

import (
	"fmt"
	"strings"
)

// problem is one thing wrong in a theme file, with the line it is on when
// the YAML parser knows it (0 otherwise).
type problem struct {
	Line int
	Msg  string
}

// fileError lists everything wrong with one theme file, not only the first
// thing: fixing a theme by re-running once per typo is tedious.
type fileError struct {
	File     string
	Problems []problem
}

// Error prints one "file:line: message" per problem, the form editors and
// terminals turn into links.
func (e *fileError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		if p.Line > 0 {
			lines[i] = fmt.Sprintf("%s:%d: %s", e.File, p.Line, p.Msg)
		} else {
			lines[i] = fmt.Sprintf("%s: %s", e.File, p.Msg)
		}
	}
	return strings.Join(lines, "\n")
}

// problems collects Problems while a file is checked.
type problems struct {
	file string
	list []problem
}

func (p *problems) add(line int, format string, args ...any) {
	p.list = append(p.list, problem{Line: line, Msg: fmt.Sprintf(format, args...)})
}

// err returns nil when nothing was wrong, so callers can return it as is.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &fileError{File: p.file, Problems: p.list}
}
