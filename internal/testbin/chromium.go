package testbin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
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

// NeedChromium returns Chromium's path, skipping t with how to get one when there is none.
func NeedChromium(t testing.TB) string {
	t.Helper()
	bin := Chromium()
	if bin == "" {
		t.Skip("no Chromium found (chromium, chromium-browser, google-chrome on PATH, or $FLOWSTATE_CHROMIUM): " +
			"the web page's browser test needs one; scripts/chromium.sh installs Debian's package (CI runs it)")
	}
	return bin
}

// Browser starts headless Chromium bin with a fresh profile in a temporary directory, a
// 1400x1250 window and no background traffic, and returns a chromedp context of one tab
// that ends within 3 minutes; the browser stops when t ends.
func Browser(t testing.TB, bin string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")), chromedp.WindowSize(1400, 1250),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancelBrowser(); cancelAlloc(); cancel() })
	return bctx
}
