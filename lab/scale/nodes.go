package scale

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The benchmark's Nodes: each cluster has -nodes of them over three zones
// of one region, labelled and with a status like a cloud provider's
// (addresses, capacity, conditions, the images it pulled), so the
// collector watches Nodes of a realistic size and derives every bench
// pod's locality from its node, as istiod does.

const benchZones = 3

func nodeName(cluster string, i int) string { return fmt.Sprintf("bench-%s-node-%03d", cluster, i) }

func nodeZone(cluster string, i int) (region, zone string) {
	region = "region-" + cluster
	return region, fmt.Sprintf("%s-%c", region, 'a'+i%benchZones)
}

// benchNode is node i of a cluster.
func benchNode(cluster string, i int) *corev1.Node {
	name := nodeName(cluster, i)
	region, zone := nodeZone(cluster, i)
	labels := map[string]string{
		"kubernetes.io/hostname":                   name,
		"kubernetes.io/os":                         "linux",
		"kubernetes.io/arch":                       "amd64",
		"beta.kubernetes.io/os":                    "linux",
		"beta.kubernetes.io/arch":                  "amd64",
		"node.kubernetes.io/instance-type":         "m5.2xlarge",
		"beta.kubernetes.io/instance-type":         "m5.2xlarge",
		"topology.kubernetes.io/region":            region,
		"topology.kubernetes.io/zone":              zone,
		"failure-domain.beta.kubernetes.io/region": region,
		"failure-domain.beta.kubernetes.io/zone":   zone,
		"topology.k8s.aws/zone-id":                 zone + "-id",
		"eks.amazonaws.com/nodegroup":              "bench-ng",
		"eks.amazonaws.com/capacityType":           "ON_DEMAND",
		"eks.amazonaws.com/nodegroup-image":        "ami-0123456789abcdef0",
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{
			"node.alpha.kubernetes.io/ttl":                           "0",
			"volumes.kubernetes.io/controller-managed-attach-detach": "true",
		}},
		Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/i-%017d", zone, i), PodCIDR: fmt.Sprintf("10.%d.%d.0/24", 100+i/250, i%250)},
	}
}

func nodeStatus(i int) corev1.NodeStatus {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("8"),
		corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	now := metav1.Now()
	st := corev1.NodeStatus{
		Capacity: capacity, Allocatable: capacity,
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("172.20.%d.%d", i/250, i%250+1)},
			{Type: corev1.NodeHostName, Address: fmt.Sprintf("ip-172-20-%d-%d.ec2.internal", i/250, i%250+1)},
			{Type: corev1.NodeInternalDNS, Address: fmt.Sprintf("ip-172-20-%d-%d.ec2.internal", i/250, i%250+1)},
		},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.3", ContainerRuntimeVersion: "containerd://2.1.0", OSImage: "Amazon Linux 2023", Architecture: "amd64", OperatingSystem: "linux"},
	}
	for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeReady} {
		s := corev1.ConditionFalse
		if c == corev1.NodeReady {
			s = corev1.ConditionTrue
		}
		st.Conditions = append(st.Conditions, corev1.NodeCondition{Type: c, Status: s, LastHeartbeatTime: now, LastTransitionTime: now, Reason: "Kubelet" + string(c)})
	}
	for j := 0; j < 20; j++ {
		st.Images = append(st.Images, corev1.ContainerImage{Names: []string{fmt.Sprintf("registry.example.com/team/app-%02d@sha256:%064d", j, j)}, SizeBytes: int64(50_000_000 + j)})
	}
	return st
}

// createNodes registers the cluster's Nodes and returns each one's zone (for
// the EndpointSlices' zone field, as the EndpointSlice controller fills it).
func createNodes(ctx context.Context, cs kubernetes.Interface, cluster string, n int) (map[string]string, error) {
	zones := make(map[string]string, n)
	for i := 0; i < n; i++ {
		node := benchNode(cluster, i)
		created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", node.Name, err)
		}
		created.Status = nodeStatus(i)
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("node %s status: %w", node.Name, err)
		}
		_, zones[node.Name] = nodeZone(cluster, i)
	}
	return zones, nil
}
