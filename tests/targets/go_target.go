// go_target.go - a Go reference target whose clock reads per request are
// known by construction: the Go runtime calls the vDSO itself (never
// libc), from time.now and runtime.nanotime1, which is what clockprof's
// Go probe points (lib/probe/go_clock_points.c) must see.
//
//	go_target MODE K [REQUESTS [SPIN]]
//	go_target goroutines G REQUESTS [SPIN]
//	go_target check G
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
// check: G goroutines check the clock until "quit" comes on stdin (it
// says "ready" first), each by calls of main.checkOnce, the boundary a
// test redirects while they run and kills the tool at each step of that:
// it compares time.Now with the raw clock_gettime syscall around it and
// with the goroutine's last reading, and its result with what it must
// be. It is called at a depth that changes from call to call, so that its
// stack check fails now and then (morestack grows the stack and runs its
// entry again); the goroutines allocate (the collector scans and shrinks
// their stacks) and the CPU profiler's SIGPROF (2 kHz) walks their
// stacks from wherever it lands. At "quit" it says "ok CALLS" and exits
// 0, or says what went wrong and exits 1.
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
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe" // go:linkname, the raw syscall's argument
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
	if mode == "check" {
		check(k)
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

var garbage []byte

// rawRealtime is CLOCK_REALTIME by the syscall, not the vDSO.
func rawRealtime() int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 0, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// checkOnce returns time.Now, n*3+1 (through a frame of its own) and
// whether the reading was right.
//
//go:noinline
func checkOnce(n int, prev time.Time) (time.Time, int, bool) {
	var frame [64]int64
	lo := rawRealtime()
	now := time.Now()
	hi := rawRealtime()
	frame[n&63] = int64(n*3 + 1)
	ok := lo <= now.UnixNano() && now.UnixNano() <= hi && !now.Before(prev)
	return now, int(frame[n&63]), ok
}

//go:noinline
func descend(depth, n int, prev time.Time) (time.Time, int, bool) {
	var frame [32]int64
	if depth == 0 {
		return checkOnce(n, prev)
	}
	frame[depth&31] = int64(depth)
	t, r, ok := descend(depth-1, n, prev)
	return t, r + int(frame[depth&31]) - depth, ok
}

func check(g int) {
	var stop atomic.Bool
	var calls, bad atomic.Int64
	var wg sync.WaitGroup
	runtime.SetCPUProfileRate(2000)
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var prev time.Time
			for n := 0; !stop.Load(); n++ {
				t, r, ok := descend(n%48, n, prev)
				if !ok || r != n*3+1 {
					bad.Add(1)
				}
				prev = t
				calls.Add(1)
				garbage = make([]byte, 512)
			}
		}()
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() && in.Text() != "quit" {
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() != 0 {
		fmt.Printf("wrong: %d of %d calls\n", bad.Load(), calls.Load())
		os.Exit(1)
	}
	fmt.Printf("ok %d\n", calls.Load())
}

// While pinned (m.locks > 0) the runtime neither preempts nor reschedules
// the goroutine.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()
