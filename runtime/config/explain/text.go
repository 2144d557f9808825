package explain

import (
	"fmt"
	"strings"

	"github.com/flowstate/flowstate/runtime/config"
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
	fmt.Fprintf(&b, "  Mode: %s; at most %d in flight; min pause %s.\n", e.Mode, e.MaxConcurrentCheckpoints, e.MinPause)
	fmt.Fprintf(&b, "  %s\n  %s\n\n", e.Retention, e.OnCancel)
	fmt.Fprintf(&b, "Savepoints\n  %s\n\n", e.Savepoints)
	fmt.Fprintf(&b, "Restore\n  %s\n\n", e.Restore)
	fmt.Fprintf(&b, "Restarts\n  %s\n\n", e.Restart)
	fmt.Fprintf(&b, "Control endpoint (%s)\n  %s\n\n", e.ControlAccess, e.ControlEndpoint)
	fmt.Fprintf(&b, "Job: %s, parallelism %d (max %d)\n", e.JobName, e.Parallelism, e.MaxParallelism)
	fmt.Fprintf(&b, "  Source: %s\n  Sink: %s\n  Runners: %s\n", e.Source, e.Sink, e.Runners)
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
	list("Command line", e.Overrides)
	list("Deprecated", e.Deprecations)
	list("Warnings", e.Warnings)
	list("Notes", e.Notes)
	list("Ignored", ignoredTexts(e.Ignored))
	return b.String()
}

// ignoredTexts groups ignored keys by reason: "reason: key (line 3), key (line 7)".
func ignoredTexts(keys []config.IgnoredKey) []string {
	var reasons []string
	byReason := map[string][]string{}
	for _, k := range keys {
		at := fmt.Sprintf("%s (line %d)", k.Key, k.Line)
		if k.Flag != "" {
			at = fmt.Sprintf("%s (%s)", k.Key, k.Flag)
		}
		if _, ok := byReason[k.Reason]; !ok {
			reasons = append(reasons, k.Reason)
		}
		byReason[k.Reason] = append(byReason[k.Reason], at)
	}
	out := make([]string, len(reasons))
	for i, r := range reasons {
		out[i] = r + ": " + strings.Join(byReason[r], ", ")
	}
	return out
}

// fileName names a configuration file in the text as config's messages do: "config" when
// there is no file.
func fileName(file string) string {
	if file == "" {
		return "config"
	}
	return file
}
