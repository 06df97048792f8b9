package scale

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/meshscope/meshscope/lab"
)

// Command is what the benchmark commands of lab/cmd share: a port offset
// (so their labs run beside `make lab` and `make e2e`), -v and -json, a
// progress log on stderr, Ctrl-C handling, and a lab that is stopped by PID
// whatever happens.
type Command struct {
	// Name prefixes every message; DefaultOffset is the port offset when
	// neither -port-offset nor $MESHSCOPE_BENCH_PORT_OFFSET says otherwise.
	Name          string
	DefaultOffset int

	PortOffset int
	Verbose    bool
	JSON       bool
}

// AddFlags registers -port-offset, -v and -json on the command line.
func (c *Command) AddFlags() {
	offset, err := lab.PortOffset("MESHSCOPE_BENCH_PORT_OFFSET", c.DefaultOffset)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", c.Name, err)
		os.Exit(2)
	}
	flag.IntVar(&c.PortOffset, "port-offset", offset, fmt.Sprintf("shift every lab port by this much (default $MESHSCOPE_BENCH_PORT_OFFSET, else %d)", c.DefaultOffset))
	flag.BoolVar(&c.Verbose, "v", false, "log the progress of the lab and of what the benchmark runs")
	flag.BoolVar(&c.JSON, "json", false, "also print the result as JSON on stdout")
}

// Logf prints one progress line on stderr.
func (c *Command) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s: %s\n", time.Now().Format("15:04:05"), c.Name, fmt.Sprintf(format, args...))
}

// Main parses the flags, checks them (an error is a usage error, exit 2),
// and runs until done or interrupted (an error exits 1).
func (c *Command) Main(check func() error, run func(ctx context.Context) error) {
	flag.Parse()
	if err := check(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", c.Name, err)
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", c.Name, err)
		os.Exit(1)
	}
}

// WithLab starts a lab of cfg, runs fn on it and stops it: on every
// return, error or Ctrl-C included, by PID (should this process crash, the
// lab's processes die with it: Pdeathsig).
func (c *Command) WithLab(ctx context.Context, cfg lab.Config, fn func(*lab.Lab) error) (err error) {
	var labLog io.Writer = io.Discard
	if c.Verbose {
		labLog = os.Stderr
	}
	started := time.Now()
	l, err := lab.Start(ctx, cfg, labLog)
	if err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	defer func() {
		c.Logf("stopping the lab")
		if serr := l.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("lab stop: %w", serr))
		}
	}()
	c.Logf("lab up in %s", time.Since(started).Round(time.Millisecond))
	return fn(l)
}

// PrintJSON writes v indented on stdout when -json is given.
func (c *Command) PrintJSON(v any) error {
	if !c.JSON {
		return nil
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteHeapProfile writes this process's heap profile to path.
func WriteHeapProfile(path string) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	return pprof.Lookup("heap").WriteTo(fh, 0)
}
