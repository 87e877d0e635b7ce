// go_http_server.go - a Go net/http server for tests/integration/test_servers.py.
// Go reads the clock through the vDSO itself, never through libc, so no
// preloaded library can count its reads; the truth is by construction: each
// request calls main.stamp once, which calls time.Now() three times, and
// Go's time.now reads the vDSO twice (REALTIME, then MONOTONIC). So the
// reads whose call site is main.stamp are exactly 6 per request; the load
// generator's own count gives the requests. Everything else (net/http's
// Date header and deadlines, the scheduler, sysmon) reads the clock too and
// is left out of that figure by its call site.
//
//	go_http_server PORT
package main

import (
	"fmt"
	"net/http"
	"os"
	"time"
)

//go:noinline
func stamp() (time.Time, time.Duration) {
	start := time.Now()
	now := time.Now()
	return now, time.Now().Sub(start)
}

func handle(w http.ResponseWriter, r *http.Request) {
	now, took := stamp()
	fmt.Fprintf(w, "%d %12d\n", now.UnixNano(), took.Nanoseconds())
}

func main() {
	http.HandleFunc("/", handle)
	if err := http.ListenAndServe("127.0.0.1:"+os.Args[1], nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
