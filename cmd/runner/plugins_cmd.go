package main

import "github.com/spf13/cobra"

func newPluginsCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{Use: "plugins", Short: "not yet implemented"}
}
