// Command lab-kubelet is the lab's stand-in for a kubelet's port-forward
// endpoint (see lab/kubelet.go): the lab's API servers proxy
// pods/portforward to it, and it forwards each pod port to a loopback
// address. The lab starts it; it is not meant to be run by hand.
//
//	lab-kubelet -listen 127.0.0.1:10250 -forward istio-system/istiod-cluster1:15010=127.0.0.1:15010 ...
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/meshscope/meshscope/lab"
)

type forwards []lab.KubeletForward

func (f *forwards) String() string { return fmt.Sprint(*f) }

func (f *forwards) Set(s string) error {
	fw, err := lab.ParseKubeletForward(s)
	if err != nil {
		return err
	}
	*f = append(*f, fw)
	return nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:10250", "address of the kubelet's HTTPS endpoint")
	var fw forwards
	flag.Var(&fw, "forward", "NAMESPACE/POD:PORT=HOST:PORT to forward (repeatable)")
	flag.Parse()
	if len(fw) == 0 {
		fmt.Fprintln(os.Stderr, "lab-kubelet: give at least one -forward NAMESPACE/POD:PORT=HOST:PORT")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Printf("lab-kubelet: serving port-forward on %s for %v", *listen, fw)
	if err := lab.ServeKubelet(ctx, *listen, fw, log.Printf); err != nil {
		log.Fatalf("lab-kubelet: %v", err)
	}
}
