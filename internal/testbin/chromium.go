package testbin

import (
	"os"
	"os/exec"
)

// Chromium returns a Chromium or Chrome binary for browser tests: $FLOWSTATE_CHROMIUM, or
// the first of chromium, chromium-browser, google-chrome, google-chrome-stable on PATH;
// "" when there is none. scripts/chromium.sh installs Debian's chromium where none is
// found (CI runs it).
func Chromium() string {
	if p := os.Getenv("FLOWSTATE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}
