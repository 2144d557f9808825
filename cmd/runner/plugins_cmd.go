package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/pluginhost"
)

func newPluginsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "Inspect the plugins in the plugin directory",
	}
	cmd.AddCommand(newPluginsListCmd(g), newPluginsLockCmd(g))
	return cmd
}

func newPluginsListCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	var file string
	cmd := &cobra.Command{
		Use:   "list [--config FILE]",
		Short: "List the plugins in the plugin directory: name, kinds, version, protocol, checksum",
		Long: `list starts every file of the plugin directory (--plugin-dir, default plugins/ beside
the runner), asks it what it is and stops it. A file that is not a working plugin is
listed with its error. With --config, the configuration's plugin directory and pins apply:
when ` + pluginhost.LockFileName + ` lies beside the file, a plugin it does not pin, or whose binary
changed since, is listed with that error and not started.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := listOptions(g, file)
			if err != nil {
				return err
			}
			host := pluginhost.New(opts)
			defer host.Close()
			listings := host.List(cmd.Context())
			if asJSON {
				return writePluginsJSON(cmd.OutOrStdout(), listings)
			}
			return writePluginsTable(cmd.OutOrStdout(), listings)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	cmd.Flags().StringVar(&file, "config", "", "configuration file whose plugin directory and pins (plugins.checksums, "+pluginhost.LockFileName+") apply")
	return cmd
}

// listOptions are the plugin host options of `plugins list`: those of the configuration
// file when one is given, else the plugin directory alone.
func listOptions(g *globalFlags, file string) (pluginhost.Options, error) {
	if file != "" {
		_, opts, err := loadConfig(g, file, true, pluginsLogger(g))
		return opts, err
	}
	dir, err := pluginDirFor(g)
	return pluginhost.Options{Dir: dir, Logger: pluginsLogger(g)}, err
}

// pluginsLogger shows plugin output only at --log-level debug or trace: the listing is
// the command's output, and it reports every failure itself.
func pluginsLogger(g *globalFlags) hclog.Logger {
	level := hclog.LevelFromString(g.logLevel)
	if level == hclog.NoLevel || level > hclog.Debug {
		level = hclog.Off
	}
	return hclog.New(&hclog.LoggerOptions{Name: "runner", Level: level, Output: os.Stderr})
}

// pluginJSON is one element of `plugins list --json`.
type pluginJSON struct {
	Name     string   `json:"name"`
	Kinds    []string `json:"kinds"`
	Version  string   `json:"version"`
	Protocol int      `json:"protocol"`
	Path     string   `json:"path"`
	SHA256   string   `json:"sha256"`
	Error    string   `json:"error"`
}

func toPluginJSON(l pluginhost.Listing) pluginJSON {
	p := pluginJSON{Name: l.Name, Kinds: []string{}, Version: l.Version, Protocol: l.Protocol, Path: l.Path, SHA256: l.SHA256}
	for _, k := range l.Kinds {
		p.Kinds = append(p.Kinds, string(k))
	}
	if l.Err != nil {
		p.Error = l.Err.Error()
	}
	return p
}

func writePluginsJSON(w io.Writer, ls []pluginhost.Listing) error {
	out := make([]pluginJSON, 0, len(ls))
	for _, l := range ls {
		out = append(out, toPluginJSON(l))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writePluginsTable(w io.Writer, ls []pluginhost.Listing) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKINDS\tVERSION\tPROTOCOL\tSHA256\tPATH\tERROR")
	for _, l := range ls {
		p := toPluginJSON(l)
		kinds, proto, sum := strings.Join(p.Kinds, ","), "", p.SHA256
		if kinds == "" {
			kinds = "-"
		}
		if p.Protocol > 0 {
			proto = fmt.Sprint(p.Protocol)
		}
		if len(sum) > 12 {
			sum = sum[:12]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, kinds, dash(p.Version), dash(proto), dash(sum), p.Path, dash(oneLine(p.Error)))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps an error's first line, for the table (--json has all of it).
func oneLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return strings.TrimSuffix(first, "; last stderr lines:")
}
