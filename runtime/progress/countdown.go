package progress

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/schollz/progressbar/v3"
)

// Countdown waits d, showing the time left, "title: 23s left of 30s": on a bar that fills
// as the time passes when its output is a terminal, otherwise in a log line at once and
// every Interval. It returns nil once d has passed, or ctx's error if ctx ends first.
// Total and Clock of opts are not used: the wait is on the system's clock.
func Countdown(ctx context.Context, opts Options, d time.Duration) error {
	log, step := opts.Logger, opts.Interval
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if step <= 0 {
		step = DefaultInterval
	}
	out := opts.Out
	if out == nil {
		out = os.Stderr
	}
	start := time.Now()
	line := func() (string, time.Duration) {
		left := max(d-time.Since(start), 0)
		return fmt.Sprintf("%s: %s left of %s", opts.Title, ceilSecond(left), ceilSecond(d)), left
	}
	var bar *progressbar.ProgressBar
	if opts.Mode == Bar || (opts.Mode == Auto && isTerminal(out)) {
		step = time.Second
		text, _ := line()
		bar = progressbar.NewOptions64(max(d.Milliseconds(), 1),
			progressbar.OptionSetWriter(out),
			progressbar.OptionSetDescription(text),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(out) }),
		)
	}
	show := func() {
		text, left := line()
		if bar == nil {
			log.Info(text, "left", left.Round(time.Millisecond).String())
			return
		}
		bar.Describe(text)
		bar.Set64((d - left).Milliseconds())
	}
	show()
	timer := time.NewTimer(d)
	defer timer.Stop()
	tick := time.NewTicker(step)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			endBar(bar, out, false)
			return ctx.Err()
		case <-timer.C:
			endBar(bar, out, true)
			return nil
		case <-tick.C:
			show()
		}
	}
}

// endBar ends a countdown's bar, full when the wait completed; without a bar it does
// nothing.
func endBar(bar *progressbar.ProgressBar, out io.Writer, completed bool) {
	switch {
	case bar == nil:
	case completed:
		bar.Finish()
	default:
		bar.Exit()
		fmt.Fprintln(out)
	}
}

// ceilSecond rounds d up to a whole second, as a countdown shows it.
func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}
