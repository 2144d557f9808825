package dirstorage

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// savepointBase returns the directory a savepoint of job jobID goes to: target, or the
// configured savepoint directory when target is empty. It refuses, with an error wrapping
// sdk.ErrInvalidArgument that names the directory and the rule:
//   - a relative path (a savepoint is never written relative to the working directory);
//   - a ".." element;
//   - a directory that lies, after the symbolic links of a local path, in the job's
//     checkpoint directory <dir>/<job> (retention and recovery delete what is there), in a
//     chk-N directory, or in a directory with a _metadata file (a checkpoint or savepoint,
//     which dispose would delete with it).
func (s *Storage) savepointBase(jobID, target string) (string, error) {
	if err := layout.CheckJobID(jobID); err != nil {
		return "", s.errs.Wrap(err, "savepoint")
	}
	given, what, base := strings.TrimSpace(target), "savepoint target", ""
	if given == "" {
		// The configured directory is a name already (ParseOptions).
		given, what, base = s.cfg.SavepointDir, "savepoint directory (option "+sdk.OptionSavepointDir+")", s.cfg.SavepointDir
	}
	if given == "" {
		return "", s.errs.New(sdk.ErrInvalidArgument,
			"No savepoint location given and no default location configured. Give a target directory, or set option %q (execution.checkpointing.savepoint-dir).", sdk.OptionSavepointDir)
	}
	refuse := func(format string, args ...any) error {
		return s.errs.New(sdk.ErrInvalidArgument, "refusing %s %q: "+format, append([]any{what, given}, args...)...)
	}
	if base == "" {
		if layout.HasDotDot(given) {
			return "", refuse(`it has a ".." element; name the directory itself`)
		}
		if !layout.HasScheme(given) && !filepath.IsAbs(given) {
			return "", refuse("it is a relative path, and a savepoint is never written relative to the working directory; give an absolute path or a file:// URI")
		}
		var err error
		if base, err = s.name(given); err != nil {
			return "", s.errs.Wrap(err, "%s %q", what, given)
		}
	}
	real, err := s.realName(base)
	if err != nil {
		return "", s.errs.WrapAs(sdk.ErrInvalidArgument, err, "refusing %s %q", what, given)
	}
	if s.cfg.Dir != "" {
		jobDir, err := s.realName(filepath.Join(s.cfg.Dir, jobID))
		if err != nil {
			return "", s.errs.Wrap(err, "checkpoint directory of job %q", jobID)
		}
		if layout.Within(jobDir, real) {
			return "", refuse("it lies in the checkpoint directory of job %q, '%s', whose contents retention and recovery delete", jobID, jobDir)
		}
	}
	for d := real; ; d = filepath.Dir(d) {
		if _, ok := layout.ParseCheckpointDir(filepath.Base(d)); ok {
			return "", refuse("it lies in the checkpoint directory '%s'", d)
		}
		info, err := s.fs.Stat(filepath.Join(d, layout.MetadataFile))
		if err == nil && info.IsRegular {
			return "", refuse("it lies in the checkpoint or savepoint '%s', which dispose would delete with it", d)
		}
		// Above the root of its names (an S3 bucket) the FS answers with an error other
		// than fs.ErrNotExist: nothing there can hold a checkpoint.
		if err != nil && !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			return base, nil
		}
	}
}

// realName returns where the name leads: for a local file (LocalPather), the path with the
// symbolic links of its deepest existing ancestor resolved (layout.RealPath); any other
// name as it is.
func (s *Storage) realName(name string) (string, error) {
	lp, ok := s.fs.(LocalPather)
	if !ok || lp.LocalPath(name) == "" {
		return name, nil
	}
	return layout.RealPath(lp.LocalPath(name))
}
