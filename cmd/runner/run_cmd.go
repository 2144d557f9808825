package main

import "github.com/spf13/cobra"

func newRunCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{Use: "run", Short: "not yet implemented"}
}
