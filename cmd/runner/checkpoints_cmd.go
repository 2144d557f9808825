package main

import "github.com/spf13/cobra"

func newCheckpointsCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{Use: "checkpoints", Short: "not yet implemented"}
}
