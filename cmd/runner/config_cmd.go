package main

import "github.com/spf13/cobra"

func newConfigCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{Use: "config", Short: "not yet implemented"}
}
