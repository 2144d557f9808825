// Command flowbench measures Flowstate's plugins against the same plugins loaded
// in-process, and against the machine's limits, and writes docs/performance.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/flowstate/flowstate/runtime/jobs"
)

func main() {
	backend := flag.String("backend", "hashmap", "")
	inproc := flag.Bool("inproc", false, "")
	prof := flag.String("cpuprofile", "", "")
	records := flag.Int64("records", 2000000, "")
	flag.Parse()
	if *prof != "" {
		f, _ := os.Create(*prof)
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	dir, _ := freshDir(os.TempDir(), "flowbench-dev")
	job, _ := jobs.Aggregate(jobs.Spec{Name: "agg", Keys: 100000, Records: *records, Parallelism: 2})
	r, err := runJob(context.Background(), runSpec{backend: *backend, mode: mode(*inproc), pluginDir: "bin/plugins", checkpoints: dir}, job)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println(r.elapsed, float64(r.stats.Records)/r.elapsed.Seconds())
}
