// Package progress reports the progress of a long operation that moves bytes (a restore,
// a savepoint, a stop with a savepoint): a bar when its output is a terminal, a log line
// every few seconds otherwise. Count the bytes with Add, or pass them through Reader or
// Writer; end with Finish. Countdown shows a wait (for a lease to expire) the same way.
//
// It knows bytes and durations, not what moves them: it imports nothing of this repository.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Mode says how progress is shown.
type Mode int

const (
	// Auto draws a bar when Out is a terminal and logs lines otherwise.
	Auto Mode = iota
	// Bar always draws a bar on Out.
	Bar
	// Log always logs lines.
	Log
)

// DefaultInterval is how often a line is logged when no bar is drawn.
const DefaultInterval = 5 * time.Second

// Options configure a Progress.
type Options struct {
	// Title names the operation: "restore", "savepoint".
	Title string
	// Total is the number of bytes expected; 0 or less when unknown (see SetTotal).
	Total int64
	// Mode chooses between a bar and log lines; Auto by default.
	Mode Mode
	// Out is where the bar is drawn; os.Stderr when nil.
	Out io.Writer
	// Logger receives the lines when no bar is drawn; a logger that discards them when nil.
	Logger hclog.Logger
	// Interval between log lines; DefaultInterval when 0.
	Interval time.Duration
	// Clock returns the current time; time.Now when nil.
	Clock func() time.Time
}

// Progress counts the bytes of one operation and shows them. Its methods are safe for
// concurrent use: several streams may count into one Progress.
type Progress struct {
	title    string
	log      hclog.Logger
	interval time.Duration
	now      func() time.Time
	bar      *progressbar.ProgressBar // nil: log lines

	done  atomic.Int64
	total atomic.Int64

	mu       sync.Mutex
	start    time.Time
	lastLine time.Time
	finished bool
}

// New starts showing the progress of an operation.
func New(opts Options) *Progress {
	p := &Progress{title: opts.Title, log: opts.Logger, interval: opts.Interval, now: opts.Clock}
	if p.log == nil {
		p.log = hclog.NewNullLogger()
	}
	if p.interval <= 0 {
		p.interval = DefaultInterval
	}
	if p.now == nil {
		p.now = time.Now
	}
	out := opts.Out
	if out == nil {
		out = os.Stderr
	}
	p.start = p.now()
	p.lastLine = p.start
	p.total.Store(max(opts.Total, 0))
	if opts.Mode == Bar || (opts.Mode == Auto && isTerminal(out)) {
		max := opts.Total
		if max <= 0 {
			max = -1 // a spinner until the total is known
		}
		p.bar = progressbar.NewOptions64(max,
			progressbar.OptionSetWriter(out),
			progressbar.OptionSetDescription(opts.Title),
			progressbar.OptionShowBytes(true),
			progressbar.OptionUseIECUnits(true),
			progressbar.OptionShowTotalBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(out) }),
		)
	}
	return p
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// SetTotal sets the number of bytes expected, once it is known.
func (p *Progress) SetTotal(total int64) {
	p.total.Store(max(total, 0))
	if p.bar != nil {
		p.mu.Lock()
		p.bar.ChangeMax64(total)
		p.mu.Unlock()
	}
}

// Add counts n more bytes done.
func (p *Progress) Add(n int64) {
	done := p.done.Add(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	if p.bar != nil {
		p.bar.Add64(n)
		return
	}
	now := p.now()
	if now.Sub(p.lastLine) < p.interval {
		return
	}
	p.lastLine = now
	p.log.Info(p.title+": "+p.describe(done, p.total.Load()), "bytes", done, "total", p.total.Load(), "rate", Bytes(int64(p.rate(done, now)))+"/s")
}

// Bytes returns the bytes done and the total expected (0 when unknown).
func (p *Progress) Bytes() (done, total int64) {
	return p.done.Load(), p.total.Load()
}

// Finish ends the operation: err nil when it completed, or why it did not. Later calls do
// nothing.
func (p *Progress) Finish(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.finished = true
	done, total := p.done.Load(), p.total.Load()
	elapsed := p.now().Sub(p.start)
	if p.bar != nil {
		if err == nil {
			p.bar.ChangeMax64(done)
			p.bar.Finish()
		} else {
			p.bar.Exit()
		}
	}
	if err != nil {
		p.log.Error(p.title+" failed after "+p.describe(done, total), "error", err, "bytes", done, "total", total)
		return
	}
	if p.bar == nil {
		p.log.Info(fmt.Sprintf("%s: done, %s in %s", p.title, Bytes(done), elapsed.Round(time.Millisecond)), "bytes", done)
	}
}

// describe says how far the operation is: "12.0 MiB of 40.0 MiB (30%)".
func (p *Progress) describe(done, total int64) string {
	if total <= 0 {
		return Bytes(done)
	}
	return fmt.Sprintf("%s of %s (%d%%)", Bytes(done), Bytes(total), done*100/total)
}

func (p *Progress) rate(done int64, now time.Time) float64 {
	if s := now.Sub(p.start).Seconds(); s > 0 {
		return float64(done) / s
	}
	return 0
}

// Reader returns r counting every byte read from it.
func (p *Progress) Reader(r io.Reader) io.Reader { return &reader{r, p} }

// Writer returns w counting every byte written to it.
func (p *Progress) Writer(w io.Writer) io.Writer { return &writer{w, p} }

type reader struct {
	r io.Reader
	p *Progress
}

func (r *reader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 {
		r.p.Add(int64(n))
	}
	return n, err
}

type writer struct {
	w io.Writer
	p *Progress
}

func (w *writer) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	if n > 0 {
		w.p.Add(int64(n))
	}
	return n, err
}

// Bytes formats a byte count in IEC units: "512 B", "1.5 KiB", "40.0 MiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, units, i := float64(n), "KMGTPE", -1
	for f >= unit && i < len(units)-1 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, units[i])
}
