package config

import (
	"fmt"
	"strings"
)

// Text renders the explanation for people.
func (e Explanation) Text() string {
	var b strings.Builder
	yesNo := func(v *bool) string {
		switch {
		case v == nil:
			return "depends on the plugin"
		case *v:
			return "yes"
		}
		return "no"
	}
	fmt.Fprintf(&b, "Configuration: %s\n\n", fileName(e.ConfigFile))
	fmt.Fprintf(&b, "Working state (state backend: %s; chosen by: %s)\n", e.StateBackend, e.StateBackendSource)
	fmt.Fprintf(&b, "  %s\n\n", e.WorkingState)
	fmt.Fprintf(&b, "Checkpoints (checkpoint storage: %s; chosen by: %s)\n", e.CheckpointStorage, e.CheckpointStorageSource)
	fmt.Fprintf(&b, "  %s\n", e.Checkpoints)
	fmt.Fprintf(&b, "  Survive the runner exiting: %s. Survive losing this machine: %s.\n", yesNo(e.Durable), yesNo(e.SurvivesMachineLoss))
	interval := "off (no periodic checkpoints)"
	if e.Interval != "off" {
		interval = "every " + e.Interval
	}
	incremental := "off"
	if e.Incremental {
		incremental = "on"
	}
	fmt.Fprintf(&b, "  Interval: %s; timeout %s; %d tolerable failed checkpoints; incremental: %s.\n",
		interval, e.Timeout, e.TolerableFailedCheckpoints, incremental)
	fmt.Fprintf(&b, "  %s\n\n", e.Retention)
	fmt.Fprintf(&b, "Savepoints\n  %s\n\n", e.Savepoints)
	fmt.Fprintf(&b, "Restarts\n  %s\n\n", e.Restart)
	fmt.Fprintf(&b, "Plugins: %s\n", e.PluginDir)
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s (%d)\n", title, len(items))
		for _, it := range items {
			fmt.Fprintf(&b, "  - %s\n", it)
		}
	}
	list("Deprecated", e.Deprecations)
	list("Warnings", e.Warnings)
	return b.String()
}
