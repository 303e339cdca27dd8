//go:build e2e

package auditscale

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// perNamespace: 25 of each kind in a namespace (500 namespaces at 50,000).
const perNamespace = 100

// namespaceName is the i-th namespace of the benchmark.
func namespaceName(i int) string { return fmt.Sprintf("scale-%04d", i) }

// createObjects creates n objects (Pods, Deployments, ConfigMaps and
// Services, a quarter each) across n/100 namespaces labelled audit-scale,
// through parallel clients with no webhook registered. Each object carries
// the kubectl.kubernetes.io/last-applied-configuration annotation kubectl
// apply writes (its JSON), and the apiserver gives it managedFields.
func createObjects(ctx context.Context, cfg *rest.Config, n, workers int, logf func(string, ...any)) (int, error) {
	spaces := max(1, n/perNamespace)
	each := max(1, n/spaces/4)
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 100000, 100000
	cfg.UserAgent = "kubectl-client-side-apply"
	clients := make([]kubernetes.Interface, 4)
	for i := range clients {
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return 0, err
		}
		clients[i] = c
	}
	for i := range spaces {
		if err := framework.EnsureNamespace(ctx, clients[0], namespaceName(i), map[string]string{"audit-scale": "yes"}); err != nil {
			return 0, err
		}
	}
	type job struct{ space, j int }
	jobs := make(chan job)
	var created atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[w%len(clients)]
			for jb := range jobs {
				if err := createSet(ctx, c, namespaceName(jb.space), jb.j); err != nil {
					once.Do(func() { first = err })
					continue
				}
				created.Add(4)
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(15 * time.Second):
				logf("%d objects created", created.Load())
			}
		}
	}()
	for i := range spaces {
		for j := range each {
			jobs <- job{i, j}
		}
	}
	close(jobs)
	wg.Wait()
	close(done)
	return int(created.Load()), first
}

// createSet creates the j-th Pod, Deployment, ConfigMap and Service of a
// namespace, some violating some policies.
func createSet(ctx context.Context, c kubernetes.Interface, ns string, j int) error {
	labels := map[string]string{"app": fmt.Sprintf("app-%02d", j), "environment": "prod"}
	if j%3 == 0 {
		labels["team"] = "a"
	}
	image := "registry.example.com/app:1.4.2"
	if j%4 == 0 {
		image = "nginx:latest"
	}
	container := corev1.Container{
		Name: "app", Image: image,
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "REGION", Value: "eu-west-1"}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
	}
	if j%2 == 0 {
		container.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}
	}
	spec := corev1.PodSpec{Containers: []corev1.Container{container}}
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%02d", j), Namespace: ns, Labels: labels}, Spec: spec}
	replicas := int32(1 + j%8)
	deploy := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("deploy-%02d", j), Namespace: ns, Labels: labels, Annotations: map[string]string{"owner": "team-a"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": labels["app"]}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}}}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", j), Namespace: ns},
		Data:       map[string]string{"app.properties": strings.Repeat("key=value\n", 20), "LOG_LEVEL": "info"}}
	if j%2 == 1 {
		cm.Labels = map[string]string{"owner": "team-a"}
	}
	if j%5 == 0 {
		cm.Data["db-password"] = "hunter2"
	}
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%02d", j), Namespace: ns, Labels: labels},
		// Headless: envtest's Service range has room for only 254 ClusterIPs.
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": labels["app"]},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}}
	if j%6 == 0 {
		svc.Spec.Ports[0].Name = ""
	}
	for _, o := range []metav1.Object{pod, deploy, cm, svc} {
		if err := lastApplied(o); err != nil {
			return err
		}
	}
	var err error
	if _, err = c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("pod %s/%s: %w", ns, pod.Name, err)
	}
	if _, err = c.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("deployment %s/%s: %w", ns, deploy.Name, err)
	}
	if _, err = c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("configmap %s/%s: %w", ns, cm.Name, err)
	}
	if _, err = c.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("service %s/%s: %w", ns, svc.Name, err)
	}
	return nil
}

// lastApplied annotates an object with its own JSON, as kubectl apply does.
func lastApplied(o metav1.Object) error {
	js, err := json.Marshal(o.(runtime.Object))
	if err != nil {
		return err
	}
	ann := o.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[corev1.LastAppliedConfigAnnotation] = string(js) + "\n"
	o.SetAnnotations(ann)
	return nil
}
