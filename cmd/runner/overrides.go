package main

import (
	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/config"
)

// overrideFlags are the flags that set configuration keys, as Flink's CLI has them:
// -D key=value (repeatable) and -p N.
type overrideFlags struct {
	dynamic     []string
	parallelism string
}

// register adds -D, and -p when withParallelism, to cmd.
func (o *overrideFlags) register(cmd *cobra.Command, withParallelism bool) {
	cmd.Flags().StringArrayVarP(&o.dynamic, "define", "D", nil, "set a configuration key, over the file: -D key=value (repeatable, as Flink's -D)")
	if withParallelism {
		cmd.Flags().StringVarP(&o.parallelism, "parallelism", "p", "", "the job's parallelism (job.parallelism, Flink's parallelism.default), over the file and -D")
	}
}

// overrides returns the overrides given, in the order they apply: -D in order, then -p.
func (o *overrideFlags) overrides(cmd *cobra.Command) ([]config.Override, error) {
	var out []config.Override
	for _, d := range o.dynamic {
		ov, err := config.ParseDynamic(d)
		if err != nil {
			return nil, err
		}
		out = append(out, ov)
	}
	if cmd.Flags().Changed("parallelism") {
		out = append(out, config.Parallelism(o.parallelism))
	}
	return out, nil
}
