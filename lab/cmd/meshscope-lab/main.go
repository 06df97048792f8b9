// Command meshscope-lab builds and runs meshscope's real test bed on
// loopback: etcd, two kube-apiservers and istiod (see the lab package and
// README: "The lab").
//
//	meshscope-lab build               build (or find cached) the lab binaries
//	meshscope-lab up [--multi-primary|--ambient] [--dns] [--port-offset N]
//	                                  start the lab in the background and print where
//	meshscope-lab down                stop every process the lab started, by PID
//	meshscope-lab status              say what runs
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/meshscope/meshscope/lab"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "meshscope-lab:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("meshscope-lab", flag.ContinueOnError)
	multi := fs.Bool("multi-primary", false, "also run istiod as primary of cluster2 (xDS 127.0.0.1:15020, http :8090)")
	ambient := fs.Bool("ambient", false, "ambient multi-network: both istiods in ambient mode, east-west Gateways, namespace ambient (implies --multi-primary)")
	dir := fs.String("dir", "", "lab state folder (default <repo>/.lab/run)")
	ownCAs := fs.Bool("own-cas", false, "let each istiod self-sign its own root (multi-primary: the clusters then trust different roots) instead of one shared plug-in root")
	withDNS := fs.Bool("dns", false, "run the lab's DNS server (names of zone lab.test, .lab/run/dns/records.json) and istiod in a mount namespace whose resolv.conf names it (needs root: unshare, mount)")
	revision := fs.String("revision", "", "also run an istiod of this revision in cluster1 (a canary upgrade: REVISION=REV, ConfigMap istio-REV, its pod labelled istio.io/rev=REV, ports +30)")
	offset := fs.Int("port-offset", 0, "move every lab port by this much (e.g. 300), to run beside another lab")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: meshscope-lab build|up|down|status [--multi-primary|--ambient] [--revision REV] [--own-cas] [--dns] [--port-offset N] [--dir DIR]")
		fs.PrintDefaults()
	}
	if len(args) == 0 {
		fs.Usage()
		return fmt.Errorf("missing command")
	}
	verb := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	root, err := lab.FindRoot()
	if err != nil {
		return err
	}
	cfg := lab.DefaultConfig(root).Shifted(*offset)
	cfg.MultiPrimary = *multi
	cfg.OwnCAs = *ownCAs
	cfg.Ambient = *ambient
	cfg.DNS = *withDNS
	if *revision != "" {
		cfg.Revisions = []string{*revision}
	}
	if *dir != "" {
		cfg.Dir, _ = filepath.Abs(*dir)
	}
	switch verb {
	case "build":
		return lab.EnsureBinaries(root, os.Stderr)
	case "up":
		return up(cfg)
	case "down":
		return lab.Down(cfg.Dir, os.Stderr)
	case "status":
		return status(cfg)
	default:
		fs.Usage()
		return fmt.Errorf("unknown command %q", verb)
	}
}

func up(cfg lab.Config) error {
	cfg.Detach = true
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	start := time.Now()
	l, err := lab.Start(ctx, cfg, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Printf("\nThe lab is up (%s). Everything listens on 127.0.0.1:\n", time.Since(start).Round(time.Millisecond))
	for _, c := range l.Clusters() {
		fmt.Printf("  %-9s kube-apiserver %s  network %s  east-west gateway %s\n", c.Name, c.URL, c.Network, c.GatewayIP)
	}
	for _, is := range l.Istiods() {
		fmt.Printf("  istiod    primary of %s, revision %s: xDS %s (TLS %s), debug %s/debug/clusterz\n", is.Cluster, is.RevisionName(), is.XDSAddress(), is.SecureXDSAddress(), is.HTTPURL())
	}
	if cfg.Ambient {
		fmt.Printf("\n  ambient multi-network: namespace %s (helloworld global, sleep not), east-west Gateways %s/%s\n", lab.AmbientNamespace, lab.SystemNamespace, lab.AmbientGateway)
		for _, is := range l.Istiods() {
			fmt.Printf("  curl -s %s/debug/ambientz   # what istiod %s sends every ztunnel\n", is.HTTPURL(), is.Cluster)
		}
	}
	if cfg.DNS {
		fmt.Printf("\n  DNS: %s answers zone %s from %s; istiod resolves gateway names with it\n", l.DNSServer(), lab.LabDNSDomain, filepath.Join(l.Dir(), "dns", "records.json"))
		fmt.Printf("  meshscope ... --gateway-dns-server %s   # resolve gateway names as istiod does here\n", l.DNSServer())
	}
	fmt.Printf("\n  kubeconfig: %s (contexts cluster1, cluster2)\n  logs:       %s\n\n", l.Kubeconfig, filepath.Join(l.Dir(), "logs"))
	fmt.Printf("  kubectl --kubeconfig %s --context cluster2 get pods -A\n", l.Kubeconfig)
	fmt.Printf("  go run ./cmd/meshscope --kubeconfig %s --context cluster1 --xds-address %s snapshot\n", l.Kubeconfig, l.Istiods()[0].XDSAddress())
	fmt.Printf("\nStop it with: go run ./lab/cmd/meshscope-lab down --dir %s\n", l.Dir())
	return nil
}

func status(cfg lab.Config) error {
	b, err := os.ReadFile(filepath.Join(cfg.Dir, "state.json"))
	if err != nil {
		fmt.Println("no lab state in", cfg.Dir)
		return nil
	}
	fmt.Println(string(b))
	return nil
}
