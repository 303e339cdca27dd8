package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
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

// apiserverOverhead creates Pods through a real kube-apiserver in
// alternating blocks: without webhooks, with the floor server registered as
// tollgate's webhooks, with tollgate (the defaults: one validating and one
// mutating webhook, both called for every Pod of the namespace), and with
// tollgate's injection webhook given the other reinvocationPolicy; it
// reports what each adds, and how many reviews each Pod create cost.
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
	ns := "bench"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"sidecar-injection": "enabled"}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	set, err := policy.LoadDefaults()
	if err != nil {
		return err
	}
	h, err := tollgate(set, src)
	if err != nil {
		return err
	}
	tg := &calls{h: h}
	base, err := serveTLS(ctx, src, tg)
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	mw, vw, err := registration.Build(set, registration.Options{URL: base, CABundle: ca, ExcludedNamespaces: engine.New(set, engine.Options{}).Excluded()})
	if err != nil {
		return err
	}
	// The same configuration, its injection webhook with the other
	// reinvocationPolicy.
	amw, avw := mw.DeepCopy(), vw.DeepCopy()
	amw.Name, avw.Name = "tollgate-other-reinvocation", "tollgate-other-reinvocation"
	other := otherReinvocation(set, amw)
	fl := &calls{h: floor()}
	floorBase, err := serveTLS(ctx, src, fl)
	if err != nil {
		return err
	}
	fmw, fvw, err := registration.Build(set, registration.Options{URL: floorBase, CABundle: ca, ExcludedNamespaces: engine.New(set, engine.Options{}).Excluded()})
	if err != nil {
		return err
	}
	fmw.Name, fvw.Name = "floor", "floor"
	seq := 0
	create := func(count int) ([]time.Duration, error) {
		var lat []time.Duration
		for range count {
			seq++
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", seq), Labels: map[string]string{"environment": "dev"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1"}}},
			}
			start := time.Now()
			if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				return nil, err
			}
			lat = append(lat, time.Since(start))
		}
		return lat, nil
	}
	// Settle after a registration change: the apiserver's webhook informer
	// takes effect within a second here; three leave a margin.
	settle := func() { time.Sleep(3 * time.Second) }
	register := func(m, v any) error {
		if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, m.(*admissionregistrationv1.MutatingWebhookConfiguration), metav1.CreateOptions{}); err != nil {
			return err
		}
		_, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, v.(*admissionregistrationv1.ValidatingWebhookConfiguration), metav1.CreateOptions{})
		settle()
		return err
	}
	unregister := func(name string) {
		_ = client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
		_ = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
		settle()
	}
	if _, err := create(50); err != nil { // warm up the apiserver and etcd
		return err
	}
	var without, with, floored, alt []time.Duration
	var tgCalls, altCalls, floorCalls int64
	for range 2 {
		lat, err := create(n / 2)
		if err != nil {
			return err
		}
		without = append(without, lat...)
		for _, b := range []struct {
			m, v  any
			name  string
			lat   *[]time.Duration
			calls *int64
			c     *calls
		}{
			{fmw, fvw, fmw.Name, &floored, &floorCalls, fl},
			{mw, vw, mw.Name, &with, &tgCalls, tg},
			{amw, avw, amw.Name, &alt, &altCalls, tg},
		} {
			if err := register(b.m, b.v); err != nil {
				return err
			}
			before := b.c.n.Load()
			if lat, err = create(n / 2); err != nil {
				return err
			}
			*b.calls += b.c.n.Load() - before
			*b.lat = append(*b.lat, lat...)
			unregister(b.name)
		}
	}
	q := func(l []time.Duration, p float64) time.Duration {
		s := slices.Clone(l)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1))]
	}
	fmt.Fprintf(out, "\n### Pod creates through kube-apiserver 1.37.2 (%d each, alternating blocks)\n\n", len(with))
	per := func(c int64) string { return fmt.Sprintf("%.2f", float64(c)/float64(len(with))) }
	fmt.Fprintf(out, "| | median | p99 | reviews per create |\n|---|---|---|---|\n")
	fmt.Fprintf(out, "| without webhooks | %s | %s | |\n", ms(q(without, 0.5)), ms(q(without, 0.99)))
	fmt.Fprintf(out, "| with the floor server as both webhooks | %s | %s | %s |\n", ms(q(floored, 0.5)), ms(q(floored, 0.99)), per(floorCalls))
	fmt.Fprintf(out, "| with tollgate (validate + inject) | %s | %s | %s |\n", ms(q(with, 0.5)), ms(q(with, 0.99)), per(tgCalls))
	fmt.Fprintf(out, "| with tollgate, injection webhook %s | %s | %s | %s |\n", other, ms(q(alt, 0.5)), ms(q(alt, 0.99)), per(altCalls))
	fmt.Fprintf(out, "| added by the floor webhooks | %s | %s | |\n", ms(q(floored, 0.5)-q(without, 0.5)), ms(q(floored, 0.99)-q(without, 0.99)))
	fmt.Fprintf(out, "| added by tollgate | %s | %s | |\n", ms(q(with, 0.5)-q(without, 0.5)), ms(q(with, 0.99)-q(without, 0.99)))
	fmt.Fprintf(out, "| added by tollgate, injection webhook %s | %s | %s | |\n", other, ms(q(alt, 0.5)-q(without, 0.5)), ms(q(alt, 0.99)-q(without, 0.99)))
	return nil
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
