package istiod

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ServicePorts reads one Service (get only) in each kube context given —
// the current one when none is — and returns the ports it has in any of
// them, sorted, for a one-service command to ask istiod for exactly that
// service's EDS clusters without reading the whole mesh. A Service that no
// context holds is an error naming the contexts asked.
func (k Kube) ServicePorts(ctx context.Context, namespace, name string) ([]int32, error) {
	kctxs := k.Contexts
	if len(kctxs) == 0 {
		kctxs = []string{""}
	}
	var (
		ports []int32
		asked []string
		errs  []error
	)
	for _, kctx := range kctxs {
		cfg, kname, err := k.config(kctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		asked = append(asked, kname)
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		svc, err := cs.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("context %q: %w", kname, err))
			continue
		}
		for _, p := range svc.Spec.Ports {
			if !slices.Contains(ports, p.Port) {
				ports = append(ports, p.Port)
			}
		}
	}
	if len(ports) > 0 {
		slices.Sort(ports)
		return ports, nil
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("service %s/%s: %w", namespace, name, err)
	}
	return nil, fmt.Errorf("service %s/%s has no ports in kube context(s) %s", namespace, name, strings.Join(asked, ", "))
}
