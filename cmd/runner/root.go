package main

import (
	"github.com/spf13/cobra"
)

// globalFlags are the flags every subcommand takes.
type globalFlags struct {
	pluginDir string
	logLevel  string
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "runner",
		Short: "Run stateful stream jobs with pluggable state backends and checkpoint storages",
		Long: `runner runs Flowstate jobs. Working state lives in a state backend plugin (hashmap:
the plugin's heap; leveldb: an embedded LSM on local disk); checkpoints are made durable by a
checkpoint storage plugin (jmstorage: in memory; fsstorage: a file system). Both are chosen in
the configuration file.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.pluginDir, "plugin-dir", "", "plugin directory (overrides plugins.dir; default: plugins/ beside the runner binary)")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "log level: trace, debug, info, warn, error")
	root.AddCommand(
		newPluginsCmd(g),
		newConfigCmd(g),
		newRunCmd(g),
		newCheckpointsCmd(g),
		newSavepointCmd(g),
		newStopCmd(g),
		newStatusCmd(g),
	)
	return root
}
