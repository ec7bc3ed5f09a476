// Command measure runs a command several times and prints the median wall
// time, the largest peak resident set size (maxrss) and the median CPU time
// (user + system) of the runs, as one tab-separated line: name, median
// seconds, peak MiB, runs, median CPU seconds. Output of the command is
// discarded; a failing run stops the measurement.
//
//	go run ./bench/measure -name NAME -runs 5 -- CMD ARGS...
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"time"
)

func main() {
	name := flag.String("name", "", "label for the output line")
	runs := flag.Int("runs", 5, "number of runs")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: measure -name NAME -runs N -- CMD ARGS...")
		os.Exit(2)
	}
	var times, cpus []float64
	var peak int64
	for i := 0; i < *runs; i++ {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stderr = os.Stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			// lint exits 1 when it finds errors: that is a result, not a failure to run.
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
				fmt.Fprintf(os.Stderr, "measure: %s: %v\n", *name, err)
				os.Exit(1)
			}
		}
		times = append(times, time.Since(start).Seconds())
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			if ru.Maxrss > peak {
				peak = ru.Maxrss // KiB on Linux
			}
			cpus = append(cpus, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds())
		}
	}
	sort.Float64s(times)
	sort.Float64s(cpus)
	cpu := 0.0
	if len(cpus) > 0 {
		cpu = cpus[len(cpus)/2]
	}
	fmt.Printf("%s\t%.3f\t%.1f\t%d\t%.3f\n", *name, times[len(times)/2], float64(peak)/1024, *runs, cpu)
}
