package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/registration"
)

// apiserverOverhead creates Pods through a real kube-apiserver on six
// sides at once, one namespace each: without webhooks, with the floor
// server registered as tollgate's webhooks, the same answering with the
// status annotation alone and with the whole patch tollgate computes
// (patchingFloor), with tollgate (the defaults: one validating and one
// mutating webhook, both called for every Pod of the namespace), and with tollgate's injection webhook given the other
// reinvocationPolicy. Every configuration is registered for its own
// namespace only, and the creates go round the six in turn, so that the
// machine's ups and downs fall on every side alike. It reports what each
// adds, and how many reviews each Pod create cost.
func apiserverOverhead(ctx context.Context, out io.Writer, root string, src *certs.FileSource, roots *x509.CertPool, caFile string, n int) error {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return fmt.Errorf("KUBEBUILDER_ASSETS is not set (make bench sets it)")
	}
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	env := &envtest.Environment{ControlPlaneStartTimeout: 2 * time.Minute}
	env.ControlPlane.GetAPIServer().Configure().Set("disable-admission-plugins", "")
	cfg, err := env.Start()
	if err != nil {
		return err
	}
	defer env.Stop()
	cfg.QPS, cfg.Burst = 1000, 1000
	client := kubernetes.NewForConfigOrDie(cfg)
	set, err := policy.LoadDefaults()
	if err != nil {
		return err
	}
	h, err := tollgate(set, src)
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	// One server per side, for its count of reviews.
	build := func(name string, h http.Handler) (*side, error) {
		c := &calls{h: h}
		base, err := serveTLS(ctx, src, c)
		if err != nil {
			return nil, err
		}
		m, v, err := registration.Build(set, registration.Options{Name: name, URL: base, CABundle: ca, ExcludedNamespaces: engine.New(set, engine.Options{}).Excluded()})
		if err != nil {
			return nil, err
		}
		return &side{ns: "bench-" + name, calls: c, m: m, v: v}, nil
	}
	none := &side{ns: "bench-none"}
	fl, err := build("floor", floor())
	if err != nil {
		return err
	}
	patching := func(name string, injected bool) (*side, error) {
		h, err := patchingFloor(set, injected)
		if err != nil {
			return nil, err
		}
		return build(name, h)
	}
	af, err := patching("annotating-floor", false)
	if err != nil {
		return err
	}
	pf, err := patching("patching-floor", true)
	if err != nil {
		return err
	}
	tg, err := build("tollgate", h)
	if err != nil {
		return err
	}
	alt, err := build("other", h)
	if err != nil {
		return err
	}
	other := otherReinvocation(set, alt.m)
	sides := []*side{none, fl, af, pf, tg, alt}
	for _, sd := range sides {
		if err := sd.setUp(ctx, client); err != nil {
			return err
		}
	}
	// The apiserver's webhook informer takes effect within a second here;
	// three leave a margin.
	time.Sleep(3 * time.Second)
	seq := 0
	round := func(record bool) error {
		for i := range sides {
			sd := sides[(seq+i)%len(sides)] // each side first in turn
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", seq), Labels: map[string]string{"environment": "dev"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1"}}},
			}
			start := time.Now()
			if _, err := client.CoreV1().Pods(sd.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("%s: %w", sd.ns, err)
			}
			if record {
				sd.lat = append(sd.lat, time.Since(start))
			}
		}
		seq++
		return nil
	}
	for range 50 { // warm up the apiserver and etcd
		if err := round(false); err != nil {
			return err
		}
	}
	counts := make([]int64, len(sides))
	for i, sd := range sides {
		if sd.calls != nil {
			counts[i] = sd.calls.n.Load()
		}
	}
	for range n {
		if err := round(true); err != nil {
			return err
		}
	}
	q := func(l []time.Duration, p float64) time.Duration {
		s := slices.Clone(l)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1))]
	}
	per := func(i int) string {
		return fmt.Sprintf("%.2f", float64(sides[i].calls.n.Load()-counts[i])/float64(n))
	}
	fmt.Fprintf(out, "\n### Pod creates through kube-apiserver 1.37.2 (%d each, the six sides in turn)\n\n", n)
	fmt.Fprintf(out, "| | median | p99 | reviews per create |\n|---|---|---|---|\n")
	fmt.Fprintf(out, "| without webhooks | %s | %s | |\n", ms(q(none.lat, 0.5)), ms(q(none.lat, 0.99)))
	fmt.Fprintf(out, "| with the floor server as both webhooks | %s | %s | %s |\n", ms(q(fl.lat, 0.5)), ms(q(fl.lat, 0.99)), per(1))
	fmt.Fprintf(out, "| with the floor server answering the status annotation alone | %s | %s | %s |\n", ms(q(af.lat, 0.5)), ms(q(af.lat, 0.99)), per(2))
	fmt.Fprintf(out, "| with the floor server answering tollgate's patch | %s | %s | %s |\n", ms(q(pf.lat, 0.5)), ms(q(pf.lat, 0.99)), per(3))
	fmt.Fprintf(out, "| with tollgate (validate + inject) | %s | %s | %s |\n", ms(q(tg.lat, 0.5)), ms(q(tg.lat, 0.99)), per(4))
	fmt.Fprintf(out, "| with tollgate, injection webhook %s | %s | %s | %s |\n", other, ms(q(alt.lat, 0.5)), ms(q(alt.lat, 0.99)), per(5))
	for _, r := range []struct {
		name string
		sd   *side
	}{{"the floor webhooks", fl}, {"the floor answering the status annotation alone", af}, {"the floor answering tollgate's patch", pf}, {"tollgate", tg}, {"tollgate, injection webhook " + string(other), alt}} {
		fmt.Fprintf(out, "| added by %s | %s | %s | |\n", r.name, ms(q(r.sd.lat, 0.5)-q(none.lat, 0.5)), ms(q(r.sd.lat, 0.99)-q(none.lat, 0.99)))
	}
	return nil
}

// side is one of the Pod-create runs: its namespace, the webhook
// configurations that select it, and what it measured.
type side struct {
	ns    string
	calls *calls
	m     *admissionregistrationv1.MutatingWebhookConfiguration
	v     *admissionregistrationv1.ValidatingWebhookConfiguration
	lat   []time.Duration
}

// setUp creates the side's namespace (labeled for injection and with its
// own bench label) and ServiceAccount, and registers its configurations
// for that namespace only.
func (sd *side) setUp(ctx context.Context, client kubernetes.Interface) error {
	labels := map[string]string{"sidecar-injection": "enabled", "bench": sd.ns}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sd.ns, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := client.CoreV1().ServiceAccounts(sd.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if sd.m == nil {
		return nil
	}
	only := func(sel *metav1.LabelSelector) *metav1.LabelSelector {
		if sel == nil {
			sel = &metav1.LabelSelector{}
		}
		if sel.MatchLabels == nil {
			sel.MatchLabels = map[string]string{}
		}
		sel.MatchLabels["bench"] = sd.ns
		return sel
	}
	for i := range sd.m.Webhooks {
		sd.m.Webhooks[i].NamespaceSelector = only(sd.m.Webhooks[i].NamespaceSelector)
	}
	for i := range sd.v.Webhooks {
		sd.v.Webhooks[i].NamespaceSelector = only(sd.v.Webhooks[i].NamespaceSelector)
	}
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, sd.m, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, sd.v, metav1.CreateOptions{})
	return err
}

// otherReinvocation gives the injection webhooks of m the reinvocation
// policy registration does not give them, and says which.
func otherReinvocation(set *policy.Set, m *admissionregistrationv1.MutatingWebhookConfiguration) admissionregistrationv1.ReinvocationPolicyType {
	injection := map[string]bool{}
	for _, g := range set.Groups {
		if g.Kind == policy.GroupInjection {
			injection[g.WebhookName()] = true
		}
	}
	other := admissionregistrationv1.NeverReinvocationPolicy
	for _, w := range m.Webhooks {
		if injection[w.Name] && *w.ReinvocationPolicy == other {
			other = admissionregistrationv1.IfNeededReinvocationPolicy
		}
	}
	for i := range m.Webhooks {
		if injection[m.Webhooks[i].Name] {
			m.Webhooks[i].ReinvocationPolicy = &other
		}
	}
	return other
}
