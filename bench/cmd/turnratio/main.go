// Command turnratio runs BenchmarkTurn of the bench module, prints the raw
// benchmark lines and a table of medians across counts, and ends with one
// line comparing adkhost with adk-go:
//
//	turn_ratio_vs_adkgo=<adkhost_t0/adkgo_t0> history10_growth=<adkhost_t10/adkhost_t0>
//	compaction_request_ratio_50_vs_10=<request bytes at turn 50 / turn 10, compaction on>
//	parallel8_wall_vs_slowest_branch=<ParallelAgent of 8 tool-calling branches / one branch alone>
//
// where tN is the median ns/op of one turn on a session with N earlier
// turns. Run it from the bench module: cd bench && go run ./cmd/turnratio.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The defaults keep a whole run (build included) under two minutes on two
// cores: 4 benchmarks x 8 counts x about 1.7 s each.
var (
	count     = flag.Int("count", 8, "go test -count: runs of each benchmark, the median is used")
	benchtime = flag.String("benchtime", "1s", "go test -benchtime")
	dir       = flag.String("dir", ".", "directory of the bench module")
)

var names = []string{
	"BenchmarkTurn/adkhost/history=0",
	"BenchmarkTurn/adkhost/history=10",
	"BenchmarkTurn/adkgo/history=0",
	"BenchmarkTurn/adkgo/history=10",
}

// line matches a benchmark result: name-GOMAXPROCS, iterations, then
// value/unit pairs.
var line = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

type samples struct{ ns, cpu, bytes, allocs []float64 }

func main() {
	flag.Parse()
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	args := []string{"test", "-run", "^$", "-bench", "^BenchmarkTurn$", "-benchmem",
		"-count", strconv.Itoa(*count), "-benchtime", *benchtime, "."}
	fmt.Printf("$ %s %s\n", goBin, strings.Join(args, " "))
	cmd := exec.Command(goBin, args...)
	cmd.Dir = *dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	results := parse(out, os.Stdout)
	if err := cmd.Wait(); err != nil {
		fail(fmt.Errorf("go test: %w", err))
	}

	fmt.Println()
	fmt.Printf("%-34s %5s %13s %11s %11s %14s %10s %10s\n", "benchmark (medians across runs)", "runs", "ns/op", "min ns/op", "max ns/op", "cpu-ns/op", "B/op", "allocs/op")
	med := map[string]float64{}
	for _, n := range names {
		s := results[n]
		if s == nil || len(s.ns) == 0 {
			fail(fmt.Errorf("no result for %s", n))
		}
		med[n] = median(s.ns)
		fmt.Printf("%-34s %5d %13.0f %11.0f %11.0f %14.0f %10.0f %10.0f\n", n, len(s.ns), med[n],
			slices.Min(s.ns), slices.Max(s.ns), median(s.cpu), median(s.bytes), median(s.allocs))
	}
	ratio, err := compactionRatio(goBin)
	if err != nil {
		fail(err)
	}
	parallel, err := parallelRatio(goBin)
	if err != nil {
		fail(err)
	}
	fmt.Printf("turn_ratio_vs_adkgo=%.2f history10_growth=%.2f compaction_request_ratio_50_vs_10=%s parallel8_wall_vs_slowest_branch=%.2f\n",
		med["BenchmarkTurn/adkhost/history=0"]/med["BenchmarkTurn/adkgo/history=0"],
		med["BenchmarkTurn/adkhost/history=10"]/med["BenchmarkTurn/adkhost/history=0"],
		ratio, parallel)
}

// parallelRatio runs BenchmarkParallelAgent and returns the median wall
// time of the 8-branch fan-out over that of one branch alone.
func parallelRatio(goBin string) (float64, error) {
	args := []string{"test", "-run", "^$", "-bench", "^BenchmarkParallelAgent$", "-benchtime", "30x",
		"-count", strconv.Itoa(*count), "."}
	fmt.Printf("\n$ %s %s\n", goBin, strings.Join(args, " "))
	cmd := exec.Command(goBin, args...)
	cmd.Dir = *dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	results := parse(out, os.Stdout)
	if err := cmd.Wait(); err != nil {
		return 0, fmt.Errorf("parallel bench: %w", err)
	}
	fan, one := results["BenchmarkParallelAgent/fanout"], results["BenchmarkParallelAgent/branch"]
	if fan == nil || one == nil || len(fan.ns) == 0 || len(one.ns) == 0 {
		return 0, fmt.Errorf("parallel bench: missing results")
	}
	return median(fan.ns) / median(one.ns), nil
}

// compactionLine is the figure TestCompactionRequestSizeBounded prints.
var compactionLine = regexp.MustCompile(`^compaction_request_ratio_50_vs_10=(\S+)$`)

// compactionRatio runs TestCompactionRequestSizeBounded, echoing its
// output, and returns the ratio it printed.
func compactionRatio(goBin string) (string, error) {
	args := []string{"test", "-run", "^TestCompactionRequestSizeBounded$", "-count", "1", "-v", "."}
	fmt.Printf("\n$ %s %s\n", goBin, strings.Join(args, " "))
	cmd := exec.Command(goBin, args...)
	cmd.Dir = *dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	os.Stdout.Write(out)
	if err != nil {
		return "", fmt.Errorf("compaction test: %w", err)
	}
	for l := range strings.Lines(string(out)) {
		if m := compactionLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			return m[1], nil
		}
	}
	return "", fmt.Errorf("compaction test printed no compaction_request_ratio_50_vs_10")
}

// parse copies go test's output to echo and collects each benchmark's
// ns/op, B/op and allocs/op.
func parse(r io.Reader, echo io.Writer) map[string]*samples {
	results := map[string]*samples{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		text := sc.Text()
		fmt.Fprintln(echo, text)
		m := line.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		s := results[m[1]]
		if s == nil {
			s = &samples{}
			results[m[1]] = s
		}
		fields := strings.Fields(m[2])
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			switch fields[i+1] {
			case "ns/op":
				s.ns = append(s.ns, v)
			case "cpu-ns/op":
				s.cpu = append(s.cpu, v)
			case "B/op":
				s.bytes = append(s.bytes, v)
			case "allocs/op":
				s.allocs = append(s.allocs, v)
			}
		}
	}
	return results
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "turnratio:", err)
	os.Exit(1)
}
