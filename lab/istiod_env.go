package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// istiodEnv is the env istiod is runs with: its identity, the lab's
// settings (istiodSettingsEnv), then what SetIstiodEnv gave it (later
// wins, as in a process's environment).
func (l *Lab) istiodEnv(is *Istiod) []string {
	env := []string{
		"POD_NAMESPACE=istio-system",
		"POD_NAME=" + IstiodPodOf(is.IstiodSpec),
		"CLUSTER_ID=" + is.Cluster,
		"REVISION=" + is.RevisionName(),
	}
	return append(append(env, l.istiodSettingsEnv()...), is.env...)
}

// istiodSettings is the settings part of istiodEnv (what its pod shows).
func (l *Lab) istiodSettings(is *Istiod) []string {
	return append(slices.Clone(l.istiodSettingsEnv()), is.env...)
}

// SetIstiodEnv restarts istiod i (by index in Istiods) with env
// (KEY=VALUE) on top of the lab's settings, as a changed istiod Deployment
// rolls out a new pod: the process runs with it, and the Pod that stands
// for it is replaced by one whose discovery container carries it (where
// meshscope reads istiod's settings). nil goes back to the lab's settings.
func (l *Lab) SetIstiodEnv(ctx context.Context, i int, env []string) error {
	is, err := l.istiod(i)
	if err != nil {
		return err
	}
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("istiod env %q: want KEY=VALUE", kv)
		}
	}
	is.env = slices.Clone(env)
	if err := l.StopIstiod(i); err != nil {
		return err
	}
	is.proc.Env = l.istiodEnv(is)
	if c := l.clusters[is.Cluster]; c != nil && l.kubelet != nil {
		pods := c.client.CoreV1().Pods(SystemNamespace)
		zero := int64(0)
		if err := pods.Delete(ctx, IstiodPodOf(is.IstiodSpec), metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("istiod pod of %s: %w", is.Cluster, err)
		}
		if err := createIstiodPod(ctx, c, is.IstiodSpec, l.istiodSettings(is)); err != nil {
			return fmt.Errorf("istiod pod of %s: %w", is.Cluster, err)
		}
	}
	return l.StartIstiod(ctx, i)
}
