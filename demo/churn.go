package demo

import (
	"context"
	"time"

	"github.com/meshscope/meshscope/internal/kubesim"
)

// churn changes the demo mesh every Interval, deterministically from the
// seed, so the events view has something to show: deployments scale up
// and down, one rolls, and network2's gateway loses its address for a few
// ticks every tenth (the planted "flapping gateway": while it is gone,
// network2's pod IPs leak to network1, and ztunnels of network1 lose the
// split-horizon workloads of network2).
func (d *Demo) churn(ctx context.Context) {
	t := time.NewTicker(d.opts.Interval)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := d.step(ctx, tick); err != nil && ctx.Err() == nil {
			d.opts.Logger.Warn("demo churn", "tick", tick, "err", err)
		}
	}
}

// churnable are the services churn may scale; the planted ones keep their
// shape so explain and doctor always find them.
func churnable() []svcDef {
	var out []svcDef
	for _, s := range services {
		switch s.Name {
		case "helloworld", "search", "legacy-billing", "reviews", "inventory":
			continue
		}
		out = append(out, s)
	}
	return out
}

func (d *Demo) step(ctx context.Context, tick int) error {
	gw := d.clusters[flappingCluster]
	switch tick % 10 {
	case 0:
		if err := kubesim.SetIngress(ctx, gw.client, systemNamespace, gatewayService, nil); err != nil {
			return err
		}
		return kubesim.SetGatewayAddresses(ctx, gw.dyn, systemNamespace, ambientGateway)
	case 3:
		if err := kubesim.SetIngress(ctx, gw.client, systemNamespace, gatewayService, []string{gw.def.GatewayIP}); err != nil {
			return err
		}
		return kubesim.SetGatewayAddresses(ctx, gw.dyn, systemNamespace, ambientGateway, gw.def.AmbientGatewayIP)
	}
	svcs := churnable()
	s := svcs[d.rnd.Intn(len(svcs))]
	ids := []string{"cluster1", "cluster2", "cluster3"}
	c := d.clusters[ids[d.rnd.Intn(len(ids))]]
	action := d.rnd.Intn(4)
	if s.MissingIn[c.def.ID] {
		// No Service there to follow its pods (a planted problem): a
		// tick without change, drawn all the same so later ticks keep
		// their course.
		return nil
	}
	switch action {
	case 0, 1: // scale up, to at most 4
		if c.podCount(s) < 4 {
			return c.addPod(ctx, s, "", podHash(d.rnd), false)
		}
		_, err := c.removePod(ctx, s)
		return err
	case 2: // scale down, never below the fixture's replicas minus one
		if c.podCount(s) > max(s.Replicas[c.def.ID]-1, 0) {
			_, err := c.removePod(ctx, s)
			return err
		}
		return c.addPod(ctx, s, "", podHash(d.rnd), false)
	default: // roll one pod: a new one (new hash, new IP), then the oldest goes
		if c.podCount(s) == 0 {
			return nil
		}
		if err := c.addPod(ctx, s, "", podHash(d.rnd), false); err != nil {
			return err
		}
		_, err := c.removePod(ctx, s)
		return err
	}
}
