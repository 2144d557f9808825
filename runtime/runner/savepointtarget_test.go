package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/control"
)

// TestSavepointTargetCheck: a request's target must lie under the savepoint directory
// (after symbolic links), be a local directory the request proves it may write to, or be
// allowed by rest.savepoint.allow-any-target; relative targets and ".." are never allowed,
// and a request without a target needs a savepoint directory, else the refusal points to
// --target.
func TestSavepointTargetCheck(t *testing.T) {
	dir := t.TempDir()
	spDir, outside := filepath.Join(dir, "savepoints"), filepath.Join(dir, "elsewhere")
	for _, d := range []string{spDir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(spDir, "escape")); err != nil {
		t.Fatal(err)
	}
	check := func(spDir string, anyTarget bool) control.TargetCheck {
		cfg := &config.Config{}
		cfg.Checkpointing.SavepointDir, cfg.Control.AllowAnySavepointTarget = spDir, anyTarget
		return savepointTargetCheck(cfg, "wc")
	}
	proof, remove, err := control.ProveTarget(filepath.Join(outside, "new", "dir"))
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	accepted := []struct {
		check         control.TargetCheck
		target, proof string
	}{
		{check(spDir, false), "", ""},
		{check(spDir, false), filepath.Join(spDir, "a", "b"), ""},
		{check(spDir, false), "file://" + spDir, ""},
		{check("s3://bucket/sp", false), "s3://bucket/sp/x", ""},
		{check(spDir, false), filepath.Join(outside, "new", "dir"), proof},
		{check("", false), filepath.Join(outside, "new", "dir"), proof},
		{check(spDir, true), outside, ""},
		{check("", true), "s3://other/x", ""},
	}
	for _, c := range accepted {
		if err := c.check(c.target, c.proof); err != nil {
			t.Errorf("target %q (proof %q): %v", c.target, c.proof, err)
		}
	}
	refused := []struct {
		check               control.TargetCheck
		target, proof, want string
	}{
		{check("", false), "", "", "--target"},
		{check(spDir, false), "relative/sp", "", "relative path"},
		{check(spDir, true), "relative/sp", "", "relative path"},
		{check(spDir, false), spDir + "/../elsewhere", "", `".." element`},
		{check(spDir, false), outside, "", config.KeyAllowAnySavepointTarget},
		{check(spDir, false), filepath.Join(spDir, "escape", "x"), "", "not under " + config.KeySavepointDir},
		{check("", false), outside, "", "has no " + config.KeySavepointDir},
		{check(spDir, false), outside, strings.Repeat("0", 32), "no proof file"},
		{check(spDir, false), outside, "../../etc/passwd", "not one runner savepoint makes"},
		{check("s3://bucket/sp", false), "s3://bucket/elsewhere", "", config.KeyAllowAnySavepointTarget},
	}
	for _, c := range refused {
		err := c.check(c.target, c.proof)
		if err == nil || !strings.Contains(err.Error(), c.want) || c.target != "" && !strings.Contains(err.Error(), c.target) {
			t.Errorf("target %q (proof %q): %v; want a refusal naming it and %q", c.target, c.proof, err, c.want)
		}
	}
	// A control character in a target is refused even where any target is allowed: a
	// newline would forge a line of the runner's log and of `runner checkpoints list`.
	for _, target := range []string{filepath.Join(spDir, "a\nb"), filepath.Join(spDir, "a\x1b[2Jb")} {
		if err := check(spDir, true)(target, ""); err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("target %q: %v; want a refusal naming the control character", target, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("%s holds %v; want the proof file only (ProveTarget creates no directory)", outside, entries)
	}
}
