// Command lab-dns is the lab's DNS server (see lab/dns.go): it answers
// the names of the lab's zone from a records file the lab writes, over
// UDP and TCP. The lab starts it; it is not meant to be run by hand.
//
//	lab-dns -listen 127.53.0.1:53 -records .lab/run/dns/records.json
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/miekg/dns"

	"github.com/meshscope/meshscope/lab"
)

func main() {
	listen := flag.String("listen", "127.53.0.1:53", "loopback address to serve on (UDP and TCP)")
	records := flag.String("records", "", "the records file (JSON, lab.DNSRecords)")
	flag.Parse()
	if *records == "" {
		fmt.Fprintln(os.Stderr, "lab-dns: give -records FILE")
		os.Exit(2)
	}
	h := lab.DNSHandler(*records)
	errs := make(chan error, 2)
	for _, netw := range []string{"udp", "tcp"} {
		srv := &dns.Server{Addr: *listen, Net: netw, Handler: h}
		go func() { errs <- srv.ListenAndServe() }()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case err := <-errs:
		log.Fatalf("lab-dns: %v", err)
	case <-sig:
	}
}
