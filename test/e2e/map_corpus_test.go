//go:build e2e

package e2e

// The objects TestMAPDifferential and the offline comparison create on both
// sides (Pods, Deployments, Services, with and without the labels and
// annotations the policies read), how they are created, and how the two
// sides' results are made comparable (generated names normalized).

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// createObject creates obj in ns (as a dry run when dry) and returns what
// the apiserver stored, or would.
func createObject(ctx context.Context, ns string, obj runtime.Object, dry bool) (map[string]any, error) {
	opts := metav1.CreateOptions{}
	if dry {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var out runtime.Object
	var err error
	switch o := obj.DeepCopyObject().(type) {
	case *corev1.Pod:
		out, err = cluster.client.CoreV1().Pods(ns).Create(ctx, o, opts)
	case *appsv1.Deployment:
		out, err = cluster.client.AppsV1().Deployments(ns).Create(ctx, o, opts)
	case *corev1.ConfigMap:
		out, err = cluster.client.CoreV1().ConfigMaps(ns).Create(ctx, o, opts)
	case *corev1.Service:
		out, err = cluster.client.CoreV1().Services(ns).Create(ctx, o, opts)
	default:
		return nil, fmt.Errorf("unexpected %T", obj)
	}
	if err != nil {
		return nil, err
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(out)
	if err != nil {
		return nil, err
	}
	u["kind"] = reflect.TypeOf(obj).Elem().Name()
	return u, nil
}

var randomSuffix = regexp.MustCompile(`kube-api-access-[a-z0-9]+`)

// normalized drops what names the object or is set by the server, and the
// random suffix of the ServiceAccount volume.
func normalized(obj map[string]any) map[string]any {
	js, _ := json.Marshal(obj)
	js = randomSuffix.ReplaceAll(js, []byte("kube-api-access"))
	var out map[string]any
	_ = json.Unmarshal(js, &out)
	if meta, ok := out["metadata"].(map[string]any); ok {
		for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"} {
			delete(meta, k)
		}
	}
	if spec, ok := out["spec"].(map[string]any); ok {
		delete(spec, "clusterIP") // allocated
		delete(spec, "clusterIPs")
	}
	return out
}

func mapPod(name string, labels, annotations map[string]string, extra ...corev1.Container) *corev1.Pod {
	l := map[string]string{"environment": "dev"}
	for k, v := range labels {
		l[k] = v
	}
	p := framework.Pod(name, l, annotations)
	p.Spec.Containers = append(p.Spec.Containers, extra...)
	return p
}

func mapDeployment(name string, replicas int32, labels map[string]string) *appsv1.Deployment {
	d := deployment(name, replicas)
	if labels != nil {
		d.Labels = labels
	}
	return d
}

func mapService(name string, annotations map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
}

// mapCorpus: 12 Pods, 8 Deployments, 6 ConfigMaps, 5 Services, each
// exercising a policy's merge, patch or condition differently.
func mapCorpus() []runtime.Object {
	tol := func(key string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	}
	proxy := func(image string, env ...corev1.EnvVar) corev1.Container {
		return corev1.Container{Name: "proxy", Image: image, Env: env}
	}
	withTolerations := func(p *corev1.Pod, ts ...corev1.Toleration) *corev1.Pod { p.Spec.Tolerations = ts; return p }
	out := []runtime.Object{
		mapPod("plain", nil, nil),
		mapPod("annotated", nil, map[string]string{"a": "b"}),
		mapPod("opted-out", map[string]string{"no-proxy": "true"}, nil),
		mapPod("old-proxy", nil, nil, proxy("registry.example.com/proxy:1")),
		mapPod("proxy-env", nil, nil, proxy("registry.example.com/proxy:1", corev1.EnvVar{Name: "LOG", Value: "debug"}, corev1.EnvVar{Name: "PROXY_MODE", Value: "loose"})),
		mapPod("two-apps", nil, nil, corev1.Container{Name: "worker", Image: "registry.example.com/worker:1"}),
		withTolerations(mapPod("tolerating", nil, nil), tol("gpu")),
		withTolerations(mapPod("tolerating-two", map[string]string{"team": "x"}, nil), tol("gpu"), tol("spot")),
		mapPod("owned", map[string]string{"team": "payments"}, map[string]string{"example.com/tolerated": "false"}),
		mapPod("counted", nil, map[string]string{"example.com/containers": "99"}),
		withTolerations(mapPod("opted-out-tolerating", map[string]string{"no-proxy": "1"}, map[string]string{"x": "y"}), tol("dedicated")),
		mapPod("many-labels", map[string]string{"a": "1", "b": "2", "managed-by": "someone"}, nil),
	}
	for i, d := range []struct {
		replicas int32
		labels   map[string]string
	}{
		{1, nil}, {1, map[string]string{"tier": "frontend"}}, {2, map[string]string{"tier": "frontend", "team": "web"}},
		{3, map[string]string{"tier": "frontend"}}, {5, map[string]string{"tier": "frontend"}}, {1, map[string]string{"tier": "backend"}},
		{0, map[string]string{"tier": "frontend", "managed-by": "helm"}}, {4, map[string]string{"owner": "someone"}},
	} {
		out = append(out, mapDeployment(fmt.Sprintf("deploy-%d", i), d.replicas, d.labels))
	}
	for i, c := range []struct {
		labels map[string]string
		data   map[string]string
	}{
		{nil, nil}, {map[string]string{"team": "db"}, nil}, {nil, map[string]string{"k": "v"}},
		{map[string]string{"managed-by": "other"}, map[string]string{"injected": "no"}}, {map[string]string{"owner": "x", "team": "y"}, map[string]string{"a": "1", "b": "2"}},
		{map[string]string{"a": "b"}, map[string]string{}},
	} {
		out = append(out, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("config-%d", i), Labels: c.labels}, Data: c.data})
	}
	svc := func(name string, selector map[string]string) *corev1.Service {
		s := mapService(name, nil)
		s.Spec.Selector = selector
		return s
	}
	out = append(out,
		svc("svc-plain", map[string]string{"app": "web"}),
		svc("svc-no-selector", nil),
		svc("svc-mesh-off", map[string]string{"mesh": "off"}),
		svc("svc-two", map[string]string{"app": "web", "tier": "frontend"}),
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc-headless"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone,
			Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{{Port: 5432, Protocol: corev1.ProtocolTCP}},
			PublishNotReadyAddresses: true, SessionAffinity: corev1.ServiceAffinityNone, IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack)}},
	)
	return out
}
