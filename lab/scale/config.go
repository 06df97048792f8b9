package scale

import (
	"path/filepath"

	"github.com/meshscope/meshscope/lab"
)

// LabConfig is the benchmarks' lab: the default lab (cluster1 on network1,
// cluster2 on network2, istiod primary of cluster1 and, for multi-primary,
// of cluster2) plus cluster3 on network2, a remote of every primary, in
// .lab/NAME of the repository, on every port shifted by offset.
func LabConfig(root, name string, offset int) lab.Config {
	cfg := lab.DefaultConfig(root)
	cfg.Dir = filepath.Join(root, ".lab", name)
	cfg.Clusters = append(cfg.Clusters, lab.ClusterSpec{
		Name: "cluster3", Network: "network2", Port: 6445, GatewayIP: "192.168.60.10", PodPrefix: "10.244.0",
	})
	return cfg.Shifted(offset)
}
