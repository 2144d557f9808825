package pluginhost

import (
	"errors"
	"fmt"
	"os"
)

// ErrInsecure: the plugin directory or a plugin binary is writable by anyone.
var ErrInsecure = errors.New("insecure plugin file")

// checkPermissions refuses a world-writable plugin directory or binary: anyone could
// replace the code the runner executes.
func checkPermissions(dir, path string) error {
	if err := notWorldWritable(dir, "plugin directory"); err != nil {
		return err
	}
	return notWorldWritable(path, "plugin binary")
}

func notWorldWritable(path, what string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return fmt.Errorf("%s %s is world-writable (mode %s): %w; run chmod o-w on it", what, path, fi.Mode().Perm(), ErrInsecure)
	}
	return nil
}
