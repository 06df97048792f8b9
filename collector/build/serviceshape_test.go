package build

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// trafficDistribution: spec first, then the Service's annotation, then the
// namespace's; PreferClose is PreferSameZone; unknown values are none.
func TestTrafficDistribution(t *testing.T) {
	s := func(spec *string, ann string) *corev1.Service {
		svc := meshtest.Service("ns", "a", 80)
		svc.Spec.TrafficDistribution = spec
		if ann != "" {
			svc.Annotations = map[string]string{model.AnnotationTrafficDistribution: ann}
		}
		return svc
	}
	str := func(v string) *string { return &v }
	cases := []struct {
		svc  *corev1.Service
		ns   string
		want string
	}{
		{s(str("PreferClose"), "PreferSameNode"), "", "PreferSameZone"},
		{s(str("PreferSameNode"), ""), "", "PreferSameNode"},
		{s(nil, "preferclose"), "PreferSameNode", "PreferSameZone"},
		{s(nil, "bogus"), "PreferSameNode", ""},
		{s(nil, ""), "PreferSameNode", "PreferSameNode"},
		{s(str("Unknown"), ""), "PreferClose", "PreferSameZone"},
		{s(nil, ""), "", ""},
	}
	for i, c := range cases {
		if got := trafficDistribution(c.svc, c.ns); got != c.want {
			t.Errorf("case %d: %q, want %q", i, got, c.want)
		}
	}
}
