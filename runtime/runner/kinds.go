package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/restart"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// KindsOf returns the function config.Resolve uses to learn what a third-party plugin
// serves: it starts the plugin in h (the run goes on with that process) and asks. A plugin
// that dies on its way up (host.ErrExited) is started again as the restart strategy r
// allows, each death logged, as the executor does with one that dies when it starts it
// again: a start-up crash is one more failure, not the end of the command. The strategy
// counts the deaths of this phase on its own; the job's restarts start from zero.
func KindsOf(ctx context.Context, h *pluginhost.Host, r config.Restart, log hclog.Logger) func(string) ([]sdk.Kind, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	policy := restart.New(r, restart.System, nil)
	return func(name string) ([]sdk.Kind, error) {
		for {
			in, err := h.Open(ctx, name)
			if err == nil {
				return in.Info().Kinds, nil
			}
			if !errors.Is(err, host.ErrExited) || ctx.Err() != nil {
				return nil, err
			}
			d := policy.Failed()
			if !d.Restart {
				return nil, fmt.Errorf("%w; not started again (%s)", err, d.Reason)
			}
			log.Warn("plugin exited during start-up; starting it again", "plugin", name, "error", err, "delay", d.Delay, "restart-strategy", policy.String())
			select {
			case <-time.After(d.Delay):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
}
