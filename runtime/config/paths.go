package config

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flowstate/flowstate/sdk/layout"
)

// checkInputOutput refuses a job whose output lies inside its input or whose input lies
// inside its output (the same directory included): the source would read the job's own
// output. Symbolic links are followed as far as the paths exist.
func (p *parser) checkInputOutput() {
	c := p.c
	in, out := c.Job.Input, c.Job.Output
	if in == "" || out == "" || strings.Contains(in, "://") || strings.Contains(out, "://") {
		return
	}
	rin, rout := realPath(in), realPath(out)
	var what string
	switch {
	case rin == rout:
		what = "are the same directory"
	case layout.Within(rin, rout):
		what = "nest: the output is inside the input"
	case layout.Within(rout, rin):
		what = "nest: the input is inside the output"
	default:
		return
	}
	p.errs.addAt(c.File, p.spellingOf(KeyJobOutput), fmt.Errorf("%w: %s (%s) and %s (%s) %s, so the job would read its own output; give them separate directories",
		ErrBadValue, c.Written(KeyJobInput), in, c.Written(KeyJobOutput), out, what))
}

// realPath resolves the symlinks of an absolute path's deepest existing ancestor
// (layout.RealPath); a path it cannot resolve (a dangling link on the way) stays as written.
func realPath(p string) string {
	p = filepath.Clean(p)
	if r, err := layout.RealPath(p); err == nil {
		return r
	}
	return p
}
