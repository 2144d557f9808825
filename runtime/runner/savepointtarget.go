package runner

import (
	"fmt"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/control"
	"github.com/flowstate/flowstate/runtime/storagepath"
)

// savepointTargetCheck returns the check of the savepoint targets that requests to the
// job's control endpoint name. A request without a target needs
// execution.checkpointing.savepoint-dir. A target must be absolute and without "..", and
// lie under execution.checkpointing.savepoint-dir, unless it is a local directory that
// the request proves its sender can write to as the runner's user (runner savepoint does:
// control.ProveTarget), or rest.savepoint.allow-any-target is true: a request from a web
// page or another user never makes the runner write elsewhere. The checkpoint storage
// then refuses a target in a checkpoint or in the job's checkpoint directory.
func savepointTargetCheck(cfg *config.Config, job string) control.TargetCheck {
	spDir := cfg.Checkpointing.SavepointDir
	return func(target, proof string) error {
		if target == "" {
			if spDir == "" {
				return fmt.Errorf("no savepoint directory: the request names no target, and job %q has no %s; give one with --target DIR (stop: --savepoint-path DIR), or set %s",
					job, config.KeySavepointDir, config.KeySavepointDir)
			}
			return nil
		}
		local, isLocal, err := storagepath.Local(target)
		if err != nil {
			return fmt.Errorf("refusing savepoint target %q: %w", target, err)
		}
		if cfg.Control.AllowAnySavepointTarget {
			return nil
		}
		if spDir != "" {
			in, err := storagepath.Within(spDir, target)
			if err != nil {
				return fmt.Errorf("refusing savepoint target %q: %w", target, err)
			}
			if in {
				return nil
			}
		}
		why := "the job has no " + config.KeySavepointDir
		if spDir != "" {
			why = fmt.Sprintf("it is not under %s '%s'", config.KeySavepointDir, spDir)
		}
		if isLocal && proof != "" {
			if err := control.CheckProof(local, proof); err != nil {
				return fmt.Errorf("refusing savepoint target %q: %s, and %w", target, why, err)
			}
			return nil
		}
		return fmt.Errorf("refusing savepoint target %q: %s; a request writes elsewhere only to a local directory its sender proves it can write to as the runner's user (runner savepoint --target does), or with %s: true",
			target, why, config.KeyAllowAnySavepointTarget)
	}
}
