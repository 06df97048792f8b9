package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/meshscope/meshscope/session/live"
)

// globalOptions are the flags every command shares.
type globalOptions struct {
	Kubeconfig string   // explicit --kubeconfig; empty means $KUBECONFIG, then ~/.kube/config
	Contexts   []string // --context, repeatable or comma-separated; empty means the current context
	XDSAddress string   // --xds-address, raw; see parseXDSAddresses
	Demo       bool
	Theme      string
	LogFile    string
}

func (o *globalOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, then ~/.kube/config, merged like kubectl)")
	fs.StringSliceVar(&o.Contexts, "context", nil, "kube context(s) to read; repeatable or comma-separated (default: the current context)")
	fs.StringVar(&o.XDSAddress, "xds-address", "", "istiod xDS address, e.g. 127.0.0.1:15010, or CLUSTER=ADDR,... for several control planes (default: port-forward to istiod)")
	fs.BoolVar(&o.Demo, "demo", false, "use the built-in demo mesh instead of a real cluster")
	fs.StringVar(&o.Theme, "theme", "default", "color theme: default, light, dark, high-contrast, catppuccin-mocha, mono, or a user theme name")
	fs.StringVar(&o.LogFile, "log-file", defaultLogFile(), "file to write logs to (logs never go to the terminal)")
}

func defaultLogFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "meshscope.log")
	}
	return filepath.Join(dir, "meshscope", "meshscope.log")
}

// parseXDSAddresses accepts "HOST:PORT" or "CLUSTER=HOST:PORT,CLUSTER=HOST:PORT".
func parseXDSAddresses(s string) ([]live.Target, error) { return parseTargets("--xds-address", s) }

// parseTargets reads a HOST:PORT or CLUSTER=HOST:PORT,... flag value; errors
// name the flag.
func parseTargets(flag, s string) ([]live.Target, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []live.Target
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		t := live.Target{Address: part}
		if k, v, ok := strings.Cut(part, "="); ok {
			t.Cluster, t.Address = strings.TrimSpace(k), strings.TrimSpace(v)
			if t.Cluster == "" {
				return nil, fmt.Errorf("%s %q: empty cluster name before '='", flag, part)
			}
		}
		if !strings.Contains(t.Address, ":") {
			return nil, fmt.Errorf("%s %q: want HOST:PORT (e.g. 127.0.0.1:15010)", flag, part)
		}
		if seen[t.Cluster] {
			if t.Cluster == "" {
				return nil, fmt.Errorf("%s: several addresses need a cluster each (CLUSTER=HOST:PORT)", flag)
			}
			return nil, fmt.Errorf("%s: cluster %q given twice", flag, t.Cluster)
		}
		seen[t.Cluster] = true
		out = append(out, t)
	}
	if len(out) > 1 {
		for _, t := range out {
			if t.Cluster == "" {
				return nil, fmt.Errorf("%s: several addresses need a cluster each (CLUSTER=HOST:PORT)", flag)
			}
		}
	}
	return out, nil
}
