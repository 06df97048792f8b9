package lab

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// SetIstiodPodVersion changes the version the istiod pod of cluster carries
// in its discovery container's image tag (IstiodVersion at start), as a
// rollout of another Istio version would: meshscope reads an istiod's
// version there. Only the pod changes, not the real istiod behind it, so
// tests can put primaries on different minor versions (an upgrade half
// done) without a second istiod build. Tests restore IstiodVersion after.
func (l *Lab) SetIstiodPodVersion(ctx context.Context, cluster, version string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	pods := c.client.CoreV1().Pods(SystemNamespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, IstiodPod(cluster), metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i, ctr := range pod.Spec.Containers {
			if ctr.Name == "discovery" {
				repo := ctr.Image
				if j := strings.LastIndexByte(repo, ':'); j > strings.LastIndexByte(repo, '/') {
					repo = repo[:j]
				}
				pod.Spec.Containers[i].Image = repo + ":" + version
				_, err = pods.Update(ctx, pod, metav1.UpdateOptions{})
				return err
			}
		}
		return fmt.Errorf("istiod pod %s/%s has no discovery container", SystemNamespace, pod.Name)
	})
}
