//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// warnings collects the warnings of one request at a time.
type warnings = framework.Warnings

// TestVAPDifferential applies the same ValidatingAdmissionPolicies natively
// (bound to namespace diff-native), through tollgate (bound to
// diff-tollgate) and through a tollgate without cluster access (bound to
// diff-offline: it knows no namespace labels; the selectors its webhooks
// carry do the selecting), creates the same corpus in each, and requires
// the same decision, HTTP code, message and warnings for every object.
func TestVAPDifferential(t *testing.T) {
	ctx := context.Background()
	template, err := os.ReadFile("testdata/vap-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for ns, label := range map[string]string{"diff-native": "native", "diff-tollgate": "tollgate", "diff-offline": "offline"} {
		if err := framework.EnsureNamespace(ctx, cluster.client, ns, map[string]string{"differential": label}); err != nil {
			t.Fatal(err)
		}
	}
	applyNative(t, bytes.ReplaceAll(template, []byte("PLACEHOLDER"), []byte("native")))
	addr := startTollgateWith(t, "tollgate-vap", vapGone("diff-tollgate"), bytes.ReplaceAll(template, []byte("PLACEHOLDER"), []byte("tollgate")))
	offlineAddr := startTollgateWithout(t, "tollgate-vap-offline", vapGone("diff-offline"), bytes.ReplaceAll(template, []byte("PLACEHOLDER"), []byte("offline")))
	// The three policies whose failurePolicy, matchPolicy and selectors
	// agree (replica-limit, pod-images, configmap-size's first binding)
	// share one webhook entry: the corpus below runs through it.
	vwc, err := cluster.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "tollgate-vap", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var shared []string
	for _, r := range vwc.Webhooks[0].Rules {
		shared = append(shared, r.Resources...)
	}
	if len(vwc.Webhooks) != 4 || strings.Join(shared, ",") != "deployments,pods,configmaps" {
		t.Fatalf("%d webhook entries, the first for %v; want 4, the first shared by deployments, pods and configmaps", len(vwc.Webhooks), shared)
	}

	w := &warnings{}
	cfg := rest.CopyConfig(cluster.restConfig)
	cfg.WarningHandler = w
	client := kubernetes.NewForConfigOrDie(cfg)
	// Every policy must be in effect on both sides before the corpus runs:
	// the apiserver loads policies and bindings asynchronously, and one with
	// failurePolicy Ignore is simply skipped until then.
	corpus := vapCorpus()
	probes := map[string]string{ // object name -> what its answer must contain
		"replicas-6": "replicas 6 is more than 5", "latest": "uses the latest tag", "four": "at most 3 keys",
		"ssh": "port 22 is privileged", "basic-auth": "basic-auth secrets are not allowed", "strict-four": "with binding 'configmap-size-strict' denied",
	}
	for _, ns := range []string{"diff-native", "diff-tollgate", "diff-offline"} {
		for _, obj := range corpus {
			want, ok := probes[obj.(metav1.Object).GetName()]
			if !ok {
				continue
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				a := createIn(ctx, t, client, w, ns, obj)
				if strings.Contains(a.message+strings.Join(a.warnings, " "), want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: policy for %s not in effect after 30s", ns, obj.(metav1.Object).GetName())
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}
	t.Logf("tollgate serving the policies at %s, without cluster access at %s", addr, offlineAddr)

	denied, warned := 0, 0
	for _, obj := range corpus {
		native := createIn(ctx, t, client, w, "diff-native", obj)
		name := fmt.Sprintf("%T %s", obj, obj.(metav1.Object).GetName())
		var through answer
		for _, side := range []string{"tollgate", "offline"} {
			through = createIn(ctx, t, client, w, "diff-"+side, obj)
			sameAnswer(t, name, side, native, through)
		}
		if !native.allowed {
			denied++
			if denied == 1 {
				t.Logf("e.g. native: %s\n     tollgate: %s", native.raw, through.raw)
			}
		}
		if len(native.warnings) > 0 {
			warned++
		}
	}
	verdict := "every decision, code, message and warning equal"
	if t.Failed() {
		verdict = "DIFFERENCES above"
	}
	t.Logf("differential corpus: %d objects of 5 kinds against 5 policies (6 bindings), natively and through tollgate with and without cluster access: %d denied, %d warned, %d allowed silently; %s",
		len(corpus), denied, warned, len(corpus)-denied-warned, verdict)
	if len(corpus) < 40 || denied < 10 || warned < 3 {
		t.Errorf("the corpus is too weak: %d objects, %d denied, %d warned", len(corpus), denied, warned)
	}
}

// sameAnswer requires tollgate's answer (through side) to be the
// apiserver's: decision, code, message and warnings, each judged by its
// own enforcer.
func sameAnswer(t *testing.T, name, side string, native, through answer) {
	t.Helper()
	if native.allowed != through.allowed || native.code != through.code || native.message != through.message {
		t.Errorf("%s:\n native:   allowed=%v code=%d %q\n %-9s allowed=%v code=%d %q", name,
			native.allowed, native.code, native.message, side+":", through.allowed, through.code, through.message)
	}
	if strings.Join(native.warnings, "\n") != strings.Join(through.warnings, "\n") {
		t.Errorf("%s: warnings differ\n native:   %q\n %-9s %q", name, native.warnings, side+":", through.warnings)
	}
	if !native.allowed && (!strings.Contains(native.raw, "is forbidden: ValidatingAdmissionPolicy") || !strings.Contains(through.raw, `admission webhook "`)) {
		t.Errorf("%s: not judged by the expected enforcers:\n native:   %s\n %-9s %s", name, native.raw, side+":", through.raw)
	}
}

type answer struct {
	allowed  bool
	code     int32
	message  string
	warnings []string
	raw      string // the error as the client got it
}

// createIn dry-run creates obj in ns and reports what the apiserver said,
// the message stripped of what names the enforcer (the apiserver's
// "<kind> is forbidden:" or the webhook's "denied the request:").
func createIn(ctx context.Context, t *testing.T, client kubernetes.Interface, w *warnings, ns string, obj runtime.Object) answer {
	t.Helper()
	obj = obj.DeepCopyObject()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	w.Take()
	var err error
	switch o := obj.(type) {
	case *corev1.Pod:
		_, err = client.CoreV1().Pods(ns).Create(ctx, o, dry)
	case *appsv1.Deployment:
		_, err = client.AppsV1().Deployments(ns).Create(ctx, o, dry)
	case *corev1.ConfigMap:
		_, err = client.CoreV1().ConfigMaps(ns).Create(ctx, o, dry)
	case *corev1.Service:
		_, err = client.CoreV1().Services(ns).Create(ctx, o, dry)
	case *corev1.Secret:
		_, err = client.CoreV1().Secrets(ns).Create(ctx, o, dry)
	default:
		t.Fatalf("unexpected %T", obj)
	}
	a := answer{allowed: err == nil, warnings: w.Take()}
	if err != nil {
		a.raw = err.Error()
		var status apierrors.APIStatus
		if s, ok := err.(apierrors.APIStatus); ok {
			status = s
			a.code = status.Status().Code
		}
		msg := err.Error()
		for _, marker := range []string{"denied the request: ", "is forbidden: "} {
			if i := strings.Index(msg, marker); i >= 0 {
				msg = msg[i+len(marker):]
				break
			}
		}
		a.message = msg
	}
	return a
}

func applyNative(t *testing.T, docs []byte) {
	t.Helper()
	ctx := context.Background()
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufioReader(docs))
	for {
		doc, err := reader.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch o := obj.(type) {
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			_, err = cluster.client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, o, metav1.CreateOptions{})
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			_, err = cluster.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, o, metav1.CreateOptions{})
		case *admissionregistrationv1.MutatingAdmissionPolicy:
			_, err = cluster.client.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, o, metav1.CreateOptions{})
		case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
			_, err = cluster.client.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// vapGone succeeds once the apiserver no longer calls the tollgate bound to ns.
func vapGone(ns string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := cluster.client.AppsV1().Deployments(ns).Create(ctx, deployment("gone", 9), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1"}}},
			},
		},
	}
}

// vapCorpus is the objects both sides must judge alike.
func vapCorpus() []runtime.Object {
	var out []runtime.Object
	for r := int32(0); r <= 8; r++ {
		out = append(out, deployment(fmt.Sprintf("replicas-%d", r), r))
	}
	limited := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}
	podWith := func(name string, labels map[string]string, containers ...corev1.Container) *corev1.Pod {
		l := map[string]string{"environment": "dev"}
		for k, v := range labels {
			l[k] = v
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}, Spec: corev1.PodSpec{Containers: containers}}
	}
	c := func(name, image string, limits bool) corev1.Container {
		ct := corev1.Container{Name: name, Image: image}
		if limits {
			ct.Resources = limited
		}
		return ct
	}
	out = append(out,
		podWith("good", nil, c("a", "registry.example.com/app:1", true)),
		podWith("latest", nil, c("a", "registry.example.com/app:latest", true)),
		podWith("docker-hub", nil, c("a", "docker.io/nginx:1.27", true)),
		podWith("no-limits", nil, c("a", "registry.example.com/app:1", false)),
		podWith("everything-wrong", nil, c("a", "nginx:latest", false)),
		podWith("second-latest", nil, c("a", "registry.example.com/a:1", true), c("b", "registry.example.com/b:latest", true)),
		podWith("second-no-limits", nil, c("a", "registry.example.com/a:1", true), c("b", "registry.example.com/b:2", false)),
		podWith("exempt", map[string]string{"exempt": "yes"}, c("a", "nginx:latest", false)),
		podWith("two-good", nil, c("a", "registry.example.com/a:1", true), c("b", "registry.example.com/b:2", true)),
		podWith("quay", nil, c("a", "quay.io/x/y:3", true)),
	)
	cm := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
	}
	out = append(out,
		cm("empty", nil),
		cm("one", map[string]string{"a": "1"}),
		cm("three", map[string]string{"a": "1", "b": "2", "c": "3"}),
		cm("four", map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}),
		cm("upper", map[string]string{"Key": "1"}),
		cm("upper-and-many", map[string]string{"A": "1", "B": "2", "c": "3", "d": "4"}),
		cm("dotted", map[string]string{"app.conf": "x"}),
		cm("kube-root-ca.crt", map[string]string{"A": "1", "B": "2", "C": "3", "D": "4"}),
	)
	strict := func(name string, data map[string]string) *corev1.ConfigMap {
		c := cm(name, data)
		c.Labels = map[string]string{"strict": "yes"}
		return c
	}
	out = append(out,
		strict("strict-one", map[string]string{"a": "1"}),
		strict("strict-four", map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}),
		strict("strict-upper", map[string]string{"Key": "1"}),
	)
	svc := func(name string, typ corev1.ServiceType, labels map[string]string, ports ...int32) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": "x"}}}
		for i, p := range ports {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("p%d", i), Port: p})
		}
		return s
	}
	out = append(out,
		svc("http", "", nil, 80),
		svc("https", "", nil, 443),
		svc("high", "", nil, 8080),
		svc("ssh", "", nil, 22),
		svc("smtp-and-http", "", nil, 80, 25),
		svc("nodeport", corev1.ServiceTypeNodePort, nil, 8080),
		svc("nodeport-ssh", corev1.ServiceTypeNodePort, nil, 22),
		svc("unchecked", "", map[string]string{"unchecked": "yes"}, 22),
		svc("cluster-ip", corev1.ServiceTypeClusterIP, nil, 9090),
	)
	secret := func(name string, typ corev1.SecretType, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: typ, Data: data}
	}
	out = append(out,
		secret("opaque", corev1.SecretTypeOpaque, map[string][]byte{"token": []byte("x")}),
		secret("basic-auth", corev1.SecretTypeBasicAuth, map[string][]byte{"username": []byte("u"), "password": []byte("correct horse battery")}),
		secret("short-password", corev1.SecretTypeOpaque, map[string][]byte{"password": []byte("abc")}),
		secret("long-password", corev1.SecretTypeOpaque, map[string][]byte{"password": []byte("a very long passphrase")}),
		secret("no-data", corev1.SecretTypeOpaque, nil),
	)
	return out
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
