package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/config/explain"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/runner"
	"github.com/flowstate/flowstate/sdk"
)

func newConfigCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Explain or migrate a configuration file",
	}
	cmd.AddCommand(newConfigExplainCmd(g), newConfigMigrateCmd())
	return cmd
}

func newConfigExplainCmd(g *globalFlags) *cobra.Command {
	var file string
	var asJSON bool
	var ov overrideFlags
	cmd := &cobra.Command{
		Use:   "explain --config FILE [--json] [-D key=value]... [-p N]",
		Short: "Say what a configuration means: where working state lives and where checkpoints go",
		Long: `explain loads a configuration file, picks the state backend and checkpoint storage as the
runner would (starting a third-party plugin to learn whether it also serves as a checkpoint
storage), and says in plain words where working state lives, whether checkpoints survive the
loss of this machine, and what in the file is deprecated or probably not what you meant.
Like run, it honours the pins of plugins.checksums and of ` + pluginhost.LockFileName + ` beside the file: it
starts no plugin binary whose checksum differs from its pin, and, while the lock file exists,
none the lock file does not pin.
Keys of a Flink configuration that only concern a Flink cluster are listed as ignored.
-D key=value and -p N override the file as they would for runner run. With --json the
output is one JSON object whatever happens: on an error it has "valid": false and the
errors, and the command exits with status 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			overrides, err := ov.overrides(cmd)
			if err == nil && file == "" {
				err = fmt.Errorf("--config: a configuration file is required")
			}
			if err == nil {
				var e explain.Explanation
				if e, err = explainConfig(cmd.Context(), g, file, nil, overrides...); err == nil {
					return writeExplanation(cmd.OutOrStdout(), e, asJSON)
				}
			}
			if asJSON {
				if werr := writeJSON(cmd.OutOrStdout(), explain.Failed(file, overrides, err)); werr != nil {
					return werr
				}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "configuration file (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of text")
	ov.register(cmd, true)
	return cmd
}

func newConfigMigrateCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "migrate --config FILE",
		Short: "Print a configuration in current keys, with a comment on each change",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("read config: %w", err)
			}
			out, err := config.Migrate(data, file)
			if err != nil {
				return err
			}
			_, err = io.WriteString(cmd.OutOrStdout(), out)
			return err
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "configuration file (required)")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

// explainConfig loads and resolves a configuration and explains it. kindsOf learns a
// third-party plugin's kinds; nil starts the plugin from the plugin directory to ask it.
func explainConfig(ctx context.Context, g *globalFlags, file string, kindsOf func(string) ([]sdk.Kind, error), overrides ...config.Override) (explain.Explanation, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, opts, err := loadConfig(g, file, true, newQuietLogger(g), overrides...)
	if err != nil {
		return explain.Explanation{}, err
	}
	if kindsOf == nil {
		host := pluginhost.New(opts)
		defer host.Close()
		kindsOf = runner.KindsOf(ctx, host, cfg.Restart, opts.Logger)
	}
	if err := config.Resolve(cfg, kindsOf); err != nil {
		return explain.Explanation{}, err
	}
	return explain.Config(cfg), nil
}

// newQuietLogger logs plugin output only when asked for with --log-level debug or trace:
// explain's own output is the explanation.
func newQuietLogger(g *globalFlags) hclog.Logger {
	level := hclog.LevelFromString(g.logLevel)
	if level == hclog.NoLevel || level == hclog.Info {
		level = hclog.Warn
	}
	return hclog.New(&hclog.LoggerOptions{Name: "runner", Level: level, Output: os.Stderr})
}

// writeExplanation prints an explanation as text or JSON.
func writeExplanation(w io.Writer, e explain.Explanation, asJSON bool) error {
	if !asJSON {
		_, err := io.WriteString(w, e.Text())
		return err
	}
	return writeJSON(w, e)
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
