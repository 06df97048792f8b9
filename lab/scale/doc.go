// Package scale fills a running lab with a mesh of benchmark size and
// changes it at a steady rate: Services spread over every lab cluster, each
// with its Running, Ready Pods and their EndpointSlice, written by parallel
// client-go writers as a Deployment, kubelets and the EndpointSlice
// controller would leave them (through internal/kubesim). The benchmark
// commands of lab/cmd share it.
//
//	p := scale.NewPlan(l, 2000, 30000, 10)
//	err := p.Fill(ctx, 32, logf)
//	ch := p.NewChurn(...)   // pods added and removed at a steady rate
package scale
