// go_target.go - a Go reference target whose clock reads per request are
// known by construction: the Go runtime calls the vDSO itself (never
// libc), from time.now and runtime.nanotime1, which is what clockprof's
// Go probe points (lib/probe/go_clock_points.c) must see.
//
//	go_target MODE K [REQUESTS [SPIN]]
//	go_target goroutines G REQUESTS [SPIN]
//
// Each request is one call of main.handleRequest (never inlined: it is the
// request boundary, func:main.handleRequest), which reads the clock K
// times the MODE's way. REQUESTS requests are served (0: until killed),
// then the program exits. Between requests it busy-waits SPIN loop
// iterations (default 200000, well under a millisecond here) to bound the
// rate: time.Sleep or a timer would make the scheduler read the clock.
// Reads per request by mode (all through the vDSO's clock_gettime):
//
//	now    2K  time.Now(): time.now reads REALTIME then MONOTONIC
//	since  K   time.Since(start): runtime.nanotime1, MONOTONIC
//	mix    3   one time.Now() and one time.Since() (K ignored)
//
// goroutines: G goroutines serve REQUESTS "mix" requests each, on two
// threads, yielding after each (runtime.Gosched), so that a goroutine's
// requests run on whichever thread is free and a thread runs every
// goroutine in turn: requests cut by goroutine are G x (REQUESTS - 1) of 3
// reads each, cut by thread they are not. The scheduler's own reads are
// made on its threads' g0 stacks, with g0 as the running goroutine.
//
// Why the serving loop is pinned (runtime.procPin, as sync.Pool does):
// Go 1.19's scheduler samples every 8th time a goroutine stops running and
// then reads the clock twice on that thread (casgstatus: scheduling
// latency), and the runtime's monitor thread (sysmon) preempts a goroutine
// that ran 10 ms without a reschedule. Unpinned, such reads land at
// random in requests, and a preemption at main.handleRequest's stack check
// runs its entry twice (an extra boundary). Pinned, sysmon's requests are
// refused, nothing else runs (GOMAXPROCS 1, collector off, the goroutine
// locked to its thread) and handleRequest has no stack check (nosplit):
// on the serving thread every read between two boundaries is one of the
// request's. Sysmon keeps reading the clock on a thread of its own;
// start-up and exit read it on the serving thread, outside requests.
//
// Build: procPin is pulled from the runtime by go:linkname, and a Go
// package with body-less functions needs an assembly file (even an empty
// one) to build; tests/targets/targets.mk adds it.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
	_ "unsafe" // go:linkname
)

var (
	start time.Time
	sink  int64
)

//go:noinline
func readNow(k int) {
	for i := 0; i < k; i++ {
		sink += time.Now().UnixNano()
	}
}

//go:noinline
func readSince(k int) {
	for i := 0; i < k; i++ {
		sink += int64(time.Since(start))
	}
}

//go:noinline
//go:nosplit
func handleRequest(mode string, k int) {
	switch mode {
	case "now":
		readNow(k)
	case "since":
		readSince(k)
	case "mix":
		readNow(1)
		readSince(1)
	}
}

// spin bounds the request rate without reading the clock.
//
//go:noinline
func spin(n int) {
	x := sink
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink ^= x & 1
}

func arg(i int, fallback int) int {
	if len(os.Args) <= i {
		return fallback
	}
	v, err := strconv.Atoi(os.Args[i])
	if err != nil || v < 0 {
		fmt.Fprintf(os.Stderr, "go_target: bad number %q\n", os.Args[i])
		os.Exit(2)
	}
	return v
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go_target now|since|mix K [REQUESTS [SPIN]]")
		os.Exit(2)
	}
	mode, k := os.Args[1], arg(2, 0)
	requests, spins := arg(3, 0), arg(4, 200000)
	if mode == "goroutines" {
		goroutines(k, requests, spins)
		return
	}
	if mode != "now" && mode != "since" && mode != "mix" {
		fmt.Fprintf(os.Stderr, "go_target: unknown mode %q\n", mode)
		os.Exit(2)
	}
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
	runtime.LockOSThread()
	start = time.Now()
	procPin()
	for i := 0; requests == 0 || i < requests; i++ {
		handleRequest(mode, k)
		spin(spins)
	}
	procUnpin()
	if sink == 42 {
		fmt.Println(sink)
	}
}

func goroutines(g, requests, spins int) {
	runtime.GOMAXPROCS(2)
	debug.SetGCPercent(-1)
	start = time.Now()
	var wg sync.WaitGroup
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < requests; r++ {
				handleRequest("mix", 0)
				spin(spins)
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	if sink == 42 {
		fmt.Println(sink)
	}
}

// While pinned (m.locks > 0) the runtime neither preempts nor reschedules
// the goroutine.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()
