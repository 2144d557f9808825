package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/pluginhost"
)

func newPluginsLockCmd(g *globalFlags) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "lock --config FILE",
		Short: "Pin the configured plugins' SHA-256 in a lock file beside the configuration",
		Long: `lock records the SHA-256 of the state backend and checkpoint storage plugins the
configuration selects in ` + pluginhost.LockFileName + ` beside the configuration file, as Terraform's
lock file does. Later runs refuse a plugin binary whose hash differs, naming the file and
both hashes. Run it again after an intended plugin upgrade.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			s, err := openSessionWith(ctx, newOfflineLogger(g), g, file, false)
			if err != nil {
				return err
			}
			defer s.Close()
			path := pluginhost.LockPath(file)
			lock, err := pluginhost.ReadLockFile(path)
			if err != nil {
				return err
			}
			want := map[string]bool{s.cfg.StateBackend: true, s.cfg.CheckpointStorage: true}
			found := map[string]bool{}
			for _, l := range s.host.List(ctx) {
				if !want[l.Name] {
					continue
				}
				if l.Err != nil {
					return fmt.Errorf("plugin %s (%s): %w", l.Name, l.Path, l.Err)
				}
				kinds := make([]string, len(l.Kinds))
				for i, k := range l.Kinds {
					kinds[i] = string(k)
				}
				lock.Plugins[l.Name] = pluginhost.LockedPlugin{SHA256: l.SHA256, Version: l.Version, Kinds: kinds}
				found[l.Name] = true
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s  %s\n", l.Name, l.Version, l.SHA256)
			}
			for name := range want {
				if !found[name] {
					return fmt.Errorf("plugin %s: not found in the plugin directory %s", name, s.cfg.Plugins.Dir)
				}
			}
			if err := lock.Write(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pinned %s in %s\n", strings.Join(keys(found), ", "), path)
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "configuration file (YAML)")
	return cmd
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
