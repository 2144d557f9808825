package ref

import (
	"context"

	"github.com/flowstate/flowstate/sdk"
)

// Plugin is Backend and Storage as one plugin of both kinds.
type Plugin struct {
	Backend
	*Storage
}

// NewPlugin returns a Plugin with an empty Storage.
func NewPlugin() Plugin { return Plugin{Storage: NewStorage()} }

// PluginInfo implements sdk.Plugin.
func (Plugin) PluginInfo() sdk.PluginInfo { return sdk.PluginInfo{Name: "ref", Version: "0.0.1"} }

// Configure implements sdk.Plugin with the options of Storage.
func (p Plugin) Configure(ctx context.Context, opts sdk.Options) error {
	return p.Storage.Configure(ctx, opts)
}
