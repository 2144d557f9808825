package sdktest

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// pluginNamePattern is the form PluginInfo.Name must have.
var pluginNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// unknownOption is an option no plugin knows.
const unknownOption = "sdktest-no-such-option"

// checkPluginInfo verifies PluginInfo: a valid name and a non-empty version.
func checkPluginInfo(t *testing.T, p sdk.Plugin) {
	t.Helper()
	info := p.PluginInfo()
	if !pluginNamePattern.MatchString(info.Name) {
		t.Errorf("PluginInfo().Name = %q, want a name matching %s", info.Name, pluginNamePattern)
	}
	if strings.TrimSpace(info.Version) == "" {
		t.Errorf("PluginInfo().Version is empty, want the plugin's version")
	}
}

// checkUnknownOption verifies that Configure refuses an unknown option with an
// *sdk.OptionError naming it.
func checkUnknownOption(t *testing.T, p sdk.Plugin) {
	t.Helper()
	err := p.Configure(context.Background(), sdk.Options{unknownOption: "x"})
	if err == nil {
		t.Fatalf("Configure with unknown option %q succeeded, want an *sdk.OptionError naming it", unknownOption)
	}
	var oe *sdk.OptionError
	if !errors.As(err, &oe) {
		t.Fatalf("Configure with unknown option %q: error %q (%T) is not an *sdk.OptionError", unknownOption, err, err)
	}
	if oe.Option != unknownOption {
		t.Fatalf("Configure with unknown option %q: OptionError names option %q", unknownOption, oe.Option)
	}
	if !strings.Contains(err.Error(), unknownOption) {
		t.Fatalf("Configure with unknown option: message %q does not name %q", err, unknownOption)
	}
}

func backendPluginChecks(t *testing.T, factory BackendFactory) {
	t.Run("PluginInfo", func(t *testing.T) { checkPluginInfo(t, factory(t)) })
	t.Run("ConfigureUnknownOptionIsOptionError", func(t *testing.T) { checkUnknownOption(t, factory(t)) })
	t.Run("KindsIncludeStateBackend", func(t *testing.T) {
		kinds := host.KindsOf(factory(t))
		if len(kinds) == 0 || kinds[0] != sdk.KindStateBackend {
			t.Fatalf("KindsOf = %v, want state-backend first", kinds)
		}
	})
}
